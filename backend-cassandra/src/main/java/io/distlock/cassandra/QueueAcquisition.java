package io.distlock.cassandra;

import io.distlock.spi.Deadline;
import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One waiting acquisition of the queue algorithm (Listing 6's loop): each attempt is one poll ({@link
 * QueueAlgorithm.Attempt#pollAsync}); when not granted, the next poll comes after the queue's pace ({@link
 * QueueAlgorithm.Attempt#untilNextPoll}) or at once when a holder in this backend releases the key. Ending without a
 * grant deletes our cells first.
 */
final class QueueAcquisition extends CassandraAcquisition {

    private final QueueAlgorithm.Attempt attempt;
    private final QueueAlgorithm algorithm;

    QueueAcquisition(
            QueueAlgorithm.Attempt attempt,
            QueueAlgorithm algorithm,
            CassandraCalls calls,
            WakeUps wakeUps,
            ScheduledExecutorService timers,
            Deadline deadline,
            Duration outageLimit) {
        super(attempt.lockKey(), attempt.key(), calls, wakeUps, timers, deadline, outageLimit);
        this.attempt = attempt;
        this.algorithm = algorithm;
    }

    @Override
    protected CompletionStage<Step<CassandraLease>> poll() {
        return attempt.pollAsync()
                .thenApply(poll -> poll.lease().isPresent()
                        ? Step.granted(poll.lease().get())
                        : Step.pollAfter(attempt.untilNextPoll(poll.place())));
    }

    @Override
    protected CompletionStage<?> withdraw() {
        return attempt.withdrawAsync();
    }

    @Override
    protected CompletionStage<?> release(CassandraLease lease) {
        return algorithm.releaseAsync(lease);
    }
}
