package io.distlock.redis;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.PollingAcquisition;
import io.distlock.toolkit.WakeUps;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Redlock (seed 002) over the masters of one {@code redis://}, {@code rediss://} or {@code redlock://} URI, or of
 * the application's clients. Acquisition is asynchronous
 * throughout ({@link RedisAcquisition}); the blocking calls wait on it.
 */
final class RedisLockBackend implements LockBackend {

    /**
     * No fencing: a Redis key's value is random, not ordered, and Redlock has no counter a resource could check (see
     * the provider's documentation for why a lease alone is not enough). Not FIFO: whoever's SET arrives first wins.
     * Waiters are woken by release messages. The lock carries a TTL that the locker renews. Read-write locks and
     * semaphores: their holders in one set per key and space ({@code shared.lua}), each with its own expiry. Who holds
     * a key is read from the masters, and a key can be broken there ({@link RedisInspection}). Lock-delay: every
     * entry's time to live is its lease plus the delay, while the holder's validity stays the lease's ({@link
     * RedlockSettings#entryPxMillis}); a release deletes at once. Release requests: a cell per holder that its renewal
     * reads ({@link #requestRelease}).
     */
    private static final Capabilities CAPABILITIES = new Capabilities(false, false, true, LeaseModel.RENEWED_TTL)
            .with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT)
            .with(
                    Capabilities.Operation.INSPECT,
                    Capabilities.Operation.BREAK,
                    Capabilities.Operation.LOCK_DELAY,
                    Capabilities.Operation.REQUEST_RELEASE);

    private static final int MAX_DOUBLINGS = 20;

    private final String target;
    private final RedlockSettings settings;
    private final Ticker ticker;
    private final Runnable closeResources;
    private final List<Master> masters;
    private final Redlock redlock;
    private final WakeUps wakeUps = new WakeUps();
    private final ReleaseMessages messages;
    private final HandOffCourtesy courtesy;
    private final ScheduledThreadPoolExecutor timers;
    private final LongAdder requests;
    private final RedisInspection inspection;
    /**
     * How long an interrupted {@link #acquire} waits for its clean-up. Computed once: {@link Duration#multipliedBy}
     * goes through {@code BigDecimal}, which cost every acquisition a few hundred bytes.
     */
    private final Duration cleanUpBound;

    RedisLockBackend(
            String target,
            int majority,
            RedlockSettings settings,
            Ticker ticker,
            Clock clock,
            List<Master> masters,
            LongAdder requests,
            Runnable closeResources) {
        this.target = target;
        this.settings = settings;
        this.ticker = ticker;
        this.closeResources = closeResources;
        this.masters = masters;
        this.requests = requests;
        this.redlock = new Redlock(masters, majority, settings, ticker);
        this.inspection = new RedisInspection(redlock, settings, clock);
        this.cleanUpBound = settings.instanceTimeout().multipliedBy(4).plusSeconds(1);
        this.timers = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-redlock-timer");
            t.setDaemon(true);
            return t;
        });
        timers.setRemoveOnCancelPolicy(true);
        this.courtesy = new HandOffCourtesy(settings.courtesyOn(masters.size()), redlock.lockerId());
        this.messages = new ReleaseMessages(
                masters,
                settings.releaseChannel(),
                majority,
                wakeUps,
                timers,
                settings.retryDelay(),
                settings.instanceTimeout(),
                courtesy);
        messages.open();
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    /**
     * One attempt; after a split vote or unanswered masters it tries again, at most {@code retryCount} times, after
     * a random delay of at most {@code retryDelay}, doubled at each retry, so that simultaneous contenders are
     * unlikely to all lose (Theorem 4 holds only with high probability here: contenders can split the masters on
     * every retry, and then all answer empty). Masters that refused for a reason no retry outlasts (a permission, a
     * node of a Redis Cluster), leaving too few for a majority, end the tries at once.
     *
     * @throws LockBackendException if too few masters answered for a majority, every time
     */
    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        for (int tries = 0; ; tries++) {
            Redlock.Attempt attempt = redlock.attempt(request).join();
            switch (attempt.outcome()) {
                case GRANTED:
                    return Optional.of(attempt.lease());
                case HELD:
                    return Optional.empty();
                case MISMATCH:
                    throw permitsMismatch(request, attempt.inUseWith());
                default:
                    boolean refused = attempt.outcome() == Redlock.Outcome.UNANSWERED
                            && redlock.refusedForGood(attempt.tally(), redlock.quorum(request));
                    if (refused
                            || tries >= Math.min(settings.retryCount(), MAX_DOUBLINGS)
                            || !pause(settings.retryDelay().multipliedBy(1L << tries))) {
                        if (attempt.outcome() == Redlock.Outcome.UNANSWERED) {
                            throw new LockBackendException(
                                    "Could not try " + request.kind().label() + " '"
                                            + request.key() + "': too few Redis masters answered for a majority of "
                                            + redlock.quorum(request)
                                            + " of " + masters.size() + (refused ? Redlock.REFUSED_FOR_GOOD : "")
                                            + " (" + attempt.tally() + "; unanswered: "
                                            + redlock.unanswered(attempt.tally()) + ")");
                        }
                        return Optional.empty();
                    }
            }
        }
    }

    /**
     * The refusal of a permit whose semaphore is in use with {@code inUseWith} permits: every user of a semaphore must
     * give the same number.
     */
    static LockConfigurationException permitsMismatch(LockRequest request, long inUseWith) {
        return request.permitsInUse(inUseWith);
    }

    /** Sleeps a random time up to {@code bound}; false if interrupted (the flag is kept). */
    private static boolean pause(Duration bound) {
        try {
            TimeUnit.NANOSECONDS.sleep(ThreadLocalRandom.current().nextLong(1, Math.max(2, bound.toNanos())));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return start(request, deadline, Runnable::run).await(cleanUpBound);
    }

    /**
     * Native: no thread waits. Completions run on {@code blockingExecutor}, so that a caller's continuation never
     * runs on (and blocks) a Redis client thread.
     */
    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        return start(request, deadline, blockingExecutor).result();
    }

    private PollingAcquisition<Lease> start(LockRequest request, Deadline deadline, Executor completion) {
        return new RedisAcquisition(
                        redlock,
                        messages,
                        wakeUps,
                        settings,
                        timers,
                        completion,
                        request,
                        RedisAcquisition.wakeKey(settings, request),
                        deadline,
                        settings.connectTimeout(),
                        courtesy)
                .start();
    }

    /**
     * Compare-and-pexpire on every master (seed 002, extending the lock).
     *
     * @return the new validity when a majority extended it in time; empty when too few still hold it for us
     * @throws LockBackendException when too few answered to tell; the locker retries while the lease is valid
     */
    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        RedisLease l = (RedisLease) lease;
        Redlock.Renewal renewal = redlock.renew(l, leaseTime).join();
        switch (renewal.result()) {
            case RENEWED:
                return OptionalLong.of(renewal.validUntilNanos());
            case LOST:
                return OptionalLong.empty();
            default:
                throw new LockBackendException("Could not renew " + l.kind().label() + " '" + lease.key()
                        + "': too few Redis masters"
                        + " answered (" + renewal.tally() + "; unanswered: " + redlock.unanswered(renewal.tally())
                        + ")");
        }
    }

    /**
     * Compare-and-delete on every master at once (seed 002: whether or not we think we hold it there).
     *
     * @return true if a majority still held it for us; false if fewer did and all answered
     * @throws LockBackendException if the masters that did not answer could have made the majority
     */
    @Override
    public boolean release(Lease lease) {
        RedisLease l = (RedisLease) lease;
        boolean lock = l.kind() == LockKind.LOCK; // the courtesy is the lock's: shares and permits have no hand-off
        if (lock && courtesy.releasing(l)) {
            // Listening again if the locker stopped while it held the key (no waiter for a second): the turn of its
            // next acquisition within the courtesy comes in a release message.
            messages.subscribed();
        }
        Tally tally = redlock.release(l).join();
        int quorum = redlock.quorum(l);
        if (tally.yes() >= quorum) {
            if (lock) {
                courtesy.released(l);
            }
            return true;
        }
        if (tally.yes() + tally.failed() + tally.pending() < quorum) {
            return false;
        }
        throw new LockBackendException(
                "Could not confirm the release of " + l.kind().label() + " '" + lease.key() + "': " + tally
                        + "; unanswered: " + redlock.unanswered(tally) + "; what is left there runs out with its ttl");
    }

    /**
     * Reads {@code holders.lua} on every master (one round trip each, in parallel): the holders on as many masters as
     * their grant needs (a majority; a permit of N > 1 its quorum), each lease ending when the last of those would drop
     * it. No grant time (Redis keeps none), no fencing token, no count of waiters (they poll; Redis knows none).
     *
     * @throws LockBackendException if fewer than a majority of the masters answered
     */
    @Override
    public LockState inspect(String key) {
        return inspection.inspect(key);
    }

    /**
     * {@code SCAN MATCH <prefix>*} on every master (one round trip per thousand keys of the keyspace), then {@link
     * #inspect} of each key found, the scripts sent together.
     */
    @Override
    public List<LockState> listHeld() {
        return inspection.listHeld();
    }

    /**
     * Deletes the key's lock key and the holders of its read-write lock and semaphore on every master, and announces
     * the release so that waiters try at once; the holders learn at their next renewal (a third of the lease).
     */
    @Override
    public List<LockHolder> breakLock(String key) {
        return inspection.breakLock(key);
    }

    /**
     * Writes a request to each holder of {@code key} on every master that holds it ({@code holders.lua}, one round
     * trip each, in parallel), which the holder's next renewal reads and deletes in its own script, at no extra round
     * trip: the holder hears it within a third of the lease (the renewal period) and a renewal's round trip. A request
     * names the holder's value, random per acquisition, and lives no longer than its entry: a later holder never reads
     * it. A holder of a fixed lease ({@code extend}), which nothing renews after, hears none that come later.
     *
     * @throws LockBackendException if fewer than a majority of the masters answered
     */
    @Override
    public List<LockHolder> requestRelease(String key) {
        return inspection.requestRelease(key);
    }

    /** Counts every command sent to every master, the pub/sub subscriptions included. */
    @Override
    public OptionalLong storeRequests() {
        return OptionalLong.of(requests.sum());
    }

    /** The registry of waiters; for tests. */
    WakeUps wakeUps() {
        return wakeUps;
    }

    @Override
    public void close() {
        timers.shutdownNow();
        for (Master m : masters) {
            m.close();
        }
        closeResources.run();
    }

    @Override
    public String toString() {
        return "RedisLockBackend[" + target + "]";
    }
}
