package io.distlock.internal;

import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A kind of grant the locker asks its backend for, and how to ask for it in each of the three ways the acquisition
 * paths ask: one attempt, a wait until a deadline, an asynchronous wait. The paths ({@link Acquirer}, {@link
 * AsyncAcquirer}) are written once against this interface and hand every grant to {@link HeldLocks}: a new kind of
 * acquisition is a new implementation (with the facade method that asks for it in an {@link Ask}), not a copy of the
 * paths.
 */
interface RequestKind {

    /**
     * The backend's own three calls, for every {@link io.distlock.LockKind}: the request says which kind it asks for.
     */
    RequestKind STORE = new RequestKind() {
        @Override
        public Optional<Lease> tryAcquire(LockBackend backend, LockRequest request) {
            return backend.tryAcquire(request);
        }

        @Override
        public Optional<Lease> acquire(LockBackend backend, LockRequest request, Deadline deadline)
                throws InterruptedException {
            return backend.acquire(request, deadline);
        }

        @Override
        public CompletableFuture<Optional<Lease>> acquireAsync(
                LockBackend backend, LockRequest request, Deadline deadline, Executor blockingExecutor) {
            return backend.acquireAsync(request, deadline, blockingExecutor);
        }

        @Override
        public String toString() {
            return "store";
        }
    };

    /** One attempt: the lease if granted at once, empty if the key is taken. See {@link LockBackend#tryAcquire}. */
    Optional<Lease> tryAcquire(LockBackend backend, LockRequest request);

    /**
     * Waits for the grant on the calling thread: empty only when {@code deadline} passed. See {@link
     * LockBackend#acquire}.
     *
     * @throws InterruptedException if the calling thread is interrupted while waiting
     */
    Optional<Lease> acquire(LockBackend backend, LockRequest request, Deadline deadline) throws InterruptedException;

    /**
     * Waits for the grant without holding the calling thread: completes with empty only when {@code deadline} passed.
     * See {@link LockBackend#acquireAsync}.
     */
    CompletableFuture<Optional<Lease>> acquireAsync(
            LockBackend backend, LockRequest request, Deadline deadline, Executor blockingExecutor);
}
