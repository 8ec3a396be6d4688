package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/** Passes every call to the backend under test; the kit's wrappers override the calls they watch or stage. */
abstract class ForwardingBackend implements LockBackend {

    final LockBackend backend;

    ForwardingBackend(LockBackend backend) {
        this.backend = backend;
    }

    @Override
    public Capabilities capabilities() {
        return backend.capabilities();
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        return backend.tryAcquire(request);
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return backend.acquire(request, deadline);
    }

    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        return backend.acquireAsync(request, deadline, blockingExecutor);
    }

    @Override
    public OptionalLong renew(Lease lease) {
        return backend.renew(lease);
    }

    @Override
    public boolean release(Lease lease) {
        return backend.release(lease);
    }

    @Override
    public OptionalLong storeRequests() {
        return backend.storeRequests();
    }

    @Override
    public void close() {
        backend.close();
    }
}
