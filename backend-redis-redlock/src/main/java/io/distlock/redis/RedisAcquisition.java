package io.distlock.redis;

import io.distlock.LockBackendException;
import io.distlock.LockKind;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.PollingAcquisition;
import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One waiting acquisition: attempt; when the lock is held, wait for a release message on its key (or the poll timer,
 * if the message is lost); after a split vote, wait a random delay of at most {@code retryDelay} (seed 002), deaf to
 * messages meanwhile, so that contenders that just split do not all come back at once, and longer after splits in a
 * row ({@link #afterSplit}); when too few masters answer, the shared exponential back-off of {@link
 * Step#storeFailed}, which ends the wait once the masters have been unreachable for {@code connectTimeout} (at once,
 * when masters refused for a reason no wait outlasts, such as a permission, leave too few for a majority). An
 * attempt that fails part-way deletes what it set, so there is nothing to withdraw but a writer's mark: a writer that
 * waits marks its read-write lock at each refused attempt, so that readers that come after it wait behind it ({@code
 * shared.lua}), and deletes the mark when it is granted or gives up. An acquisition that starts just after its locker
 * released the key, which others were waiting for, first waits for what is left of the courtesy ({@link
 * HandOffCourtesy}), or until its locker's turn comes round; a grant that found the key held, or that other lockers
 * had meanwhile, is marked so on its lease.
 */
final class RedisAcquisition extends PollingAcquisition<Lease> {

    private static final int MAX_DOUBLINGS = 20;

    private final Redlock redlock;
    private final ReleaseMessages messages;
    private final RedlockSettings settings;
    private final LockRequest request;
    private final Deadline deadline;
    private final HandOffCourtesy handOffs;
    private final String redisKey;
    /** A writer's mark ({@link Redlock#writerMark}), which its refused attempts set; null for the other kinds. */
    private final String writerMark;

    private final boolean tookCourtesy;
    private final long courtesyEnds;
    // Attempts are sequential (each is sent after the previous answered), on whichever thread answered.
    private volatile int splitsInARow;
    private volatile boolean inCourtesy;
    private volatile boolean waited;

    RedisAcquisition(
            Redlock redlock,
            ReleaseMessages messages,
            WakeUps wakeUps,
            RedlockSettings settings,
            ScheduledExecutorService timers,
            Executor completion,
            LockRequest request,
            String wakeKey,
            Deadline deadline,
            Duration outageLimit,
            HandOffCourtesy handOffs) {
        super(request.key(), deadline, outageLimit, timers, wakeUps, wakeKey, completion);
        this.redlock = redlock;
        this.messages = messages;
        this.settings = settings;
        this.request = request;
        this.deadline = deadline;
        this.handOffs = handOffs;
        this.redisKey = wakeKey;
        this.writerMark = request.kind() == LockKind.WRITE ? redlock.writerMark(request.ownerId()) : null;
        long courtesy = handOffs.delayNanos(redisKey);
        this.tookCourtesy = courtesy > 0;
        this.inCourtesy = tookCourtesy;
        this.courtesyEnds = System.nanoTime() + courtesy;
    }

    @Override
    protected CompletionStage<Step<Lease>> attempt() {
        if (inCourtesy) { // this locker just released the key, which others wait for: their turn first
            long left = courtesyEnds - System.nanoTime();
            if (left > 0 && !handOffs.turnCame(redisKey)) {
                // the first attempt, or woken by something other than the locker's turn (its own release): wait on,
                // listening, for the turn comes in a release message (a locker stops listening a second after its
                // last wait: a turn missed so cost the whole courtesy)
                listen(messages.listening());
                return CompletableFuture.completedFuture(Step.pollAfter(left));
            }
            inCourtesy = false;
        }
        // Read before the attempt is sent: a subscription that completes after it cannot have heard a release that
        // came between the attempt's refusals and the subscription.
        boolean listening = messages.listening();
        return redlock.attempt(request, redisKey, writerMark).handle((attempt, error) -> {
            if (error != null) {
                throw new LockBackendException(
                        "Acquiring lock '" + request.key() + "' failed: " + Master.unwrap(error), error);
            }
            switch (attempt.outcome()) {
                case GRANTED:
                    if (waited || (tookCourtesy && handOffs.rivalReleasedSinceOwn(redisKey))) {
                        attempt.lease().markWaitedFor();
                    }
                    return Step.granted(attempt.lease());
                case HELD:
                    waited = true;
                    splitsInARow = 0;
                    listen(listening);
                    announce();
                    long poll = settings.pollInterval().toNanos();
                    return Step.pollAfter(randomNanos(poll / 2, poll));
                case UNANSWERED:
                    if (redlock.refusedForGood(attempt.tally(), redlock.quorum(request))) {
                        throw unreachable(attempt.tally(), Redlock.REFUSED_FOR_GOOD);
                    }
                    return Step.storeFailed(unreachable(attempt.tally(), ""));
                case MISMATCH:
                    throw RedisLockBackend.permitsMismatch(request, attempt.inUseWith());
                default:
                    waited = true;
                    announce();
                    int splits = ++splitsInARow;
                    if (splits > 1) {
                        listen(listening); // woken by a release from the second split in a row on
                    }
                    return afterSplit(splits);
            }
        });
    }

    /**
     * Subscribes the locker to release messages before this waiter sleeps. When it was not listening as the attempt
     * was sent ({@code listeningBefore}), the key may have been released between the masters' refusals and the
     * subscription, a release nobody here heard: the waiter attempts again once subscribed (at once, if the
     * subscription is already in place now), instead of sleeping until its poll timer.
     */
    private void listen(boolean listeningBefore) {
        CompletableFuture<Void> ready = messages.subscribed();
        if (!listeningBefore) {
            ready.thenRun(this::wakeUp);
        }
    }

    /**
     * Tells the other lockers that this one waits for the lock's key, so that their courtesy counts it as a rival
     * ({@link HandOffCourtesy}): a locker that never held the key is otherwise nobody's rival, and loses every race
     * against the turns of two that hand it to each other. Shares and permits have no courtesy.
     */
    private void announce() {
        if (request.kind() == LockKind.LOCK) {
            messages.waiting(redisKey);
        }
    }

    /**
     * After a split vote: the first time, a random delay of at most {@code retryDelay}, deaf to releases (seed 002:
     * contenders that just split must not come back together). Splits in a row mean a holder with a bare majority
     * (the rest of the masters are free, so every attempt wins some of them and fails): the bound doubles up to the
     * poll interval and a release wakes the waiter, instead of a retry every few milliseconds for the whole hold.
     */
    private Step<Lease> afterSplit(int splits) {
        long first = settings.retryDelay().toNanos();
        if (splits == 1) {
            return Step.backOff(randomNanos(1, first));
        }
        long poll = settings.pollInterval().toNanos();
        long bound = Math.min(first << Math.min(splits - 1, MAX_DOUBLINGS), poll);
        return Step.pollAfter(randomNanos(bound / 2, bound));
    }

    /** A writer's mark, if it set one, is deleted; nothing else of a refused attempt is left in the store. */
    @Override
    protected CompletionStage<?> withdraw() {
        return writerMark == null
                ? CompletableFuture.completedFuture(null)
                : redlock.withdrawWriterMark(request.key(), writerMark);
    }

    @Override
    protected CompletionStage<?> release(Lease lease) {
        return redlock.release((RedisLease) lease);
    }

    /**
     * What the waiter registers under and a release names: the lock's Redis key (which its attempts set), or the
     * space's label.
     */
    static String wakeKey(RedlockSettings settings, LockRequest request) {
        return request.kind() == LockKind.LOCK
                ? settings.redisKey(request.key())
                : settings.spaceLabel(request.key(), request.kind().space());
    }

    private LockBackendException unreachable(Tally tally, String why) {
        return new LockBackendException("Could not acquire " + request.kind().label() + " '" + request.key()
                + "': too few Redis masters answered for a majority of " + redlock.quorum(request) + " of "
                + redlock.masters().size() + why + " (last attempt: " + tally + "; unanswered: "
                + redlock.unanswered(tally) + ")");
    }

    private static long randomNanos(long min, long max) {
        return max <= min ? min : ThreadLocalRandom.current().nextLong(min, max + 1);
    }
}
