package io.distlock.cassandra;

import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One waiting acquisition of the legacy algorithm, Listing 4: a TryLock (Listing 3, {@link
 * LegacyAlgorithm#tryLockAsync}); while another owns the lock, TryLock again after a random 0 to {@value
 * LegacyAlgorithm#OWNED_BACKOFF_MS} ms; after a concurrent attempt, after a random 0 to {@value
 * LegacyAlgorithm#CONCURRENT_BACKOFF_MS} ms times the attempt's number. The listing sleeps through releases, and so
 * does this wait. Each TryLock that does not win deletes its own cells, so ending the wait leaves nothing to withdraw.
 */
final class LegacyAcquisition extends CassandraAcquisition {

    private final LegacyAlgorithm algorithm;
    private final LockRequest request;
    private int concurrentAttempts; // Listing 4's attempt counter; one attempt is in flight at a time

    LegacyAcquisition(
            LegacyAlgorithm algorithm,
            LockRequest request,
            CassandraCalls calls,
            WakeUps wakeUps,
            ScheduledExecutorService timers,
            Deadline deadline,
            Duration outageLimit) {
        super(request.key(), request.key(), calls, wakeUps, timers, deadline, outageLimit);
        this.algorithm = algorithm;
        this.request = request;
    }

    @Override
    protected CompletionStage<Step<CassandraLease>> poll() {
        return algorithm.tryLockAsync(request).thenApply(result -> switch (result.outcome) {
            case SUCCESS -> Step.granted(result.lease.orElseThrow());
            case ANOTHER_THREAD_IS_OWNER -> backOffUpTo(LegacyAlgorithm.OWNED_BACKOFF_MS);
            case CONCURRENT_ATTEMPT -> backOffUpTo(LegacyAlgorithm.CONCURRENT_BACKOFF_MS * ++concurrentAttempts);
        });
    }

    private static Step<CassandraLease> backOffUpTo(long millis) {
        return Step.backOff(
                TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextLong(millis + 1)));
    }

    @Override
    protected CompletionStage<?> withdraw() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletionStage<?> release(CassandraLease lease) {
        return algorithm.releaseAsync(lease);
    }
}
