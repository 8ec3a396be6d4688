package io.distlock.redis;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import io.distlock.spi.PollingAcquisition;
import io.distlock.spi.WakeUps;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One waiting acquisition: attempt; when the lock is held, wait for a release message on its key (or the poll timer,
 * if the message is lost); after a split vote or unanswered masters, wait a random delay of at most {@code
 * retryDelay} (seed 002), deaf to messages meanwhile, so that contenders that just split do not all come back at
 * once. An attempt that fails part-way deletes what it set, so there is nothing to withdraw.
 */
final class Acquisition extends PollingAcquisition<Lease> {

    private final Redlock redlock;
    private final ReleaseMessages messages;
    private final RedlockSettings settings;
    private final LockRequest request;
    private final Deadline deadline;

    Acquisition(
            Redlock redlock,
            ReleaseMessages messages,
            WakeUps wakeUps,
            RedlockSettings settings,
            ScheduledExecutorService timers,
            Executor completion,
            LockRequest request,
            Deadline deadline,
            Duration outageLimit) {
        super(request.key(), deadline, outageLimit, timers, wakeUps, settings.redisKey(request.key()), completion);
        this.redlock = redlock;
        this.messages = messages;
        this.settings = settings;
        this.request = request;
        this.deadline = deadline;
    }

    @Override
    protected CompletionStage<Step<Lease>> attempt() {
        return redlock.attempt(request).handle((attempt, error) -> {
            if (error != null) {
                throw new LockBackendException(
                        "Acquiring lock '" + request.key() + "' failed: " + Master.unwrap(error), error);
            }
            switch (attempt.outcome()) {
                case GRANTED:
                    return Step.granted(attempt.lease());
                case HELD:
                    CompletableFuture<Void> ready = messages.subscribed();
                    if (!ready.isDone()) {
                        ready.thenRun(this::wakeUp); // the subscription may have missed a release: look again
                    }
                    long poll = settings.pollInterval().toNanos();
                    return Step.pollAfter(randomNanos(poll / 2, poll));
                case UNANSWERED:
                    return Step.storeFailed(unreachable(attempt.tally()));
                default:
                    return Step.backOff(randomNanos(1, settings.retryDelay().toNanos()));
            }
        });
    }

    @Override
    protected CompletionStage<?> withdraw() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    protected CompletionStage<?> release(Lease lease) {
        return redlock.release((RedlockLease) lease);
    }

    private LockBackendException unreachable(Tally tally) {
        return new LockBackendException("Could not acquire lock '" + request.key()
                + "': too few Redis masters answered for a majority of " + redlock.majority() + " of "
                + redlock.masters().size() + " (last attempt: " + tally + "; unanswered: "
                + redlock.unanswered(tally) + ")");
    }

    private static long randomNanos(long min, long max) {
        return max <= min ? min : ThreadLocalRandom.current().nextLong(min, max + 1);
    }
}
