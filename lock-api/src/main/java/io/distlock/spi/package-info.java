/**
 * What a backend implements, and nothing else: a store adapter provides a {@link io.distlock.spi.LockBackendProvider}
 * (found by {@link java.util.ServiceLoader} through the URI's scheme) that opens a {@link
 * io.distlock.spi.LockBackend} from a {@link io.distlock.spi.BackendConfig}; the backend answers each {@link
 * io.distlock.spi.LockRequest} with a {@link io.distlock.spi.Lease}, waits no longer than its {@link
 * io.distlock.spi.Deadline}, and tells the request's {@link io.distlock.spi.LeaseLossListener} of a loss it learns of by
 * itself. Secrets read from options come as a {@link io.distlock.spi.Secret}, and {@link io.distlock.spi.Redaction}
 * hides them in text bound for a message or a log.
 *
 * <p>Checks, owner ids, renewal, loss handling, multi-key order, re-entrancy and asynchronous calls live once in the
 * locker, not in backends. What backends may use to implement the contract (polling and blocking waits, host lists,
 * TLS and timeout settings, duration text) is in {@link io.distlock.toolkit}.
 */
package io.distlock.spi;
