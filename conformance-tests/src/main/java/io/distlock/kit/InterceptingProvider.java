package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.LockBackendException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.spi.LockRequest;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Wraps the provider under test to stage lease loss in one JVM: it can make renewals fail as if the store were
 * unreachable, and it can delete a granted lease behind the locker's back as if the store had dropped it. Everything
 * else goes straight to the real backend.
 */
final class InterceptingProvider implements LockBackendProvider {

    private final LockBackendProvider delegate;
    private final AtomicBoolean renewalsFail = new AtomicBoolean();
    private final Map<String, Interception> granted = new ConcurrentHashMap<>();

    private record Interception(LockBackend backend, Lease lease) {}

    InterceptingProvider(LockBackendProvider delegate) {
        this.delegate = delegate;
    }

    /** From now on every renewal throws {@link LockBackendException}, as if the store could not be reached. */
    void failRenewals() {
        renewalsFail.set(true);
    }

    /**
     * Releases the latest lease granted on {@code key} through the real backend, without the locker knowing: the
     * store no longer holds the lock for its owner, while the owner's locker goes on renewing it.
     */
    void dropBehindLockersBack(String key) {
        Interception last = granted.get(key);
        if (last == null) {
            throw new IllegalStateException("No lease on '" + key + "' was granted through this provider");
        }
        last.backend().release(last.lease());
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public Set<String> uriSchemes() {
        return delegate.uriSchemes();
    }

    @Override
    public LockBackend open(BackendConfig config) {
        LockBackend backend = delegate.open(config);
        return new LockBackend() {
            @Override
            public Capabilities capabilities() {
                return backend.capabilities();
            }

            @Override
            public Optional<Lease> tryAcquire(LockRequest request) {
                return remember(backend.tryAcquire(request));
            }

            @Override
            public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
                return remember(backend.acquire(request, deadline));
            }

            private Optional<Lease> remember(Optional<Lease> lease) {
                lease.ifPresent(l -> granted.put(l.key(), new Interception(backend, l)));
                return lease;
            }

            @Override
            public OptionalLong renew(Lease lease) {
                if (renewalsFail.get()) {
                    throw new LockBackendException("staged by the conformance kit: the store is unreachable");
                }
                return backend.renew(lease);
            }

            @Override
            public boolean release(Lease lease) {
                return backend.release(lease);
            }

            @Override
            public void close() {
                backend.close();
            }
        };
    }
}
