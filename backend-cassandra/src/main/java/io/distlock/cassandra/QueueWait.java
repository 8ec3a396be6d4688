package io.distlock.cassandra;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.spi.PollingAcquisition;
import io.distlock.spi.WakeUps;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One waiting acquisition of the queue algorithm (Listing 6's loop): each attempt is one poll, an asynchronous chain
 * of driver requests ({@link QueueAlgorithm.Attempt#pollAsync}); when not granted, the next poll comes after the
 * queue's pace ({@link QueueAlgorithm.Attempt#untilNextPoll}) or at once when a holder in this backend releases the
 * key. A store that fails is polled again after a growing back-off, until it has failed for the {@code connectTimeout}
 * or until the deadline, which then ends the wait with its last failure. Ending
 * without a grant deletes our cells first.
 */
final class QueueWait extends PollingAcquisition<CassandraLease> {

    private static final Logger LOG = LoggerFactory.getLogger(QueueWait.class);

    private final QueueAlgorithm.Attempt attempt;
    private final QueueAlgorithm algorithm;

    QueueWait(
            QueueAlgorithm.Attempt attempt,
            QueueAlgorithm algorithm,
            WakeUps wakeUps,
            ScheduledExecutorService timers,
            Deadline deadline,
            Duration outageLimit) {
        super(attempt.key(), deadline, outageLimit, timers, wakeUps, attempt.key(), Runnable::run);
        this.attempt = attempt;
        this.algorithm = algorithm;
    }

    @Override
    protected CompletionStage<Step<CassandraLease>> attempt() {
        CompletionStage<QueueAlgorithm.Poll> polled;
        try {
            polled = attempt.pollAsync();
        } catch (RuntimeException e) {
            polled = CompletableFuture.failedFuture(e);
        }
        return polled.handle((poll, error) -> {
            if (error == null) {
                return poll.lease().isPresent()
                        ? Step.granted(poll.lease().get())
                        : Step.pollAfter(attempt.untilNextPoll(poll.place()));
            }
            RuntimeException failure = CqlCalls.unwrap(error);
            if (!(failure instanceof LockBackendException storeFailure)) {
                throw failure; // a bug, not the store: ends the wait
            }
            LOG.debug("Waiting for lock '{}': {}", attempt.key(), storeFailure.toString());
            return Step.<CassandraLease>storeFailed(new LockBackendException(
                    "Could not acquire lock '" + attempt.key() + "': Cassandra failed every attempt (last: "
                            + storeFailure.getMessage() + ")",
                    storeFailure));
        });
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
