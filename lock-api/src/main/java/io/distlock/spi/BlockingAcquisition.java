package io.distlock.spi;

import io.distlock.LockBackendException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;

/**
 * The default {@link LockBackend#acquireAsync}: the blocking {@link LockBackend#acquire} on a thread of the given
 * executor, interrupted when the future is cancelled; a grant nobody can receive any more is released.
 */
final class BlockingAcquisition {

    private BlockingAcquisition() {}

    static CompletableFuture<Optional<Lease>> start(
            LockBackend backend, LockRequest request, Deadline deadline, Executor executor) {
        CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
        FutureTask<Void> task = new FutureTask<>(
                () -> {
                    try {
                        Optional<Lease> lease = backend.acquire(request, deadline);
                        if (!result.complete(lease)) {
                            lease.ifPresent(backend::release); // cancelled meanwhile: the grant is nobody's
                        }
                    } catch (InterruptedException e) {
                        result.cancel(false);
                    } catch (RuntimeException e) {
                        result.completeExceptionally(e);
                    } catch (Throwable e) {
                        result.completeExceptionally(
                                new LockBackendException("Acquiring lock '" + request.key() + "' failed: " + e, e));
                    }
                },
                null);
        try {
            executor.execute(task);
        } catch (RuntimeException rejected) {
            result.completeExceptionally(rejected);
            return result;
        }
        Future<?> running = task;
        result.whenComplete((v, e) -> {
            if (result.isCancelled()) {
                running.cancel(true);
            }
        });
        return result;
    }
}
