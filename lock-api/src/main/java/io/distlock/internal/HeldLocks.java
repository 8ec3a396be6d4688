package io.distlock.internal;

import io.distlock.LockBackendException;
import io.distlock.LockKind;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.Ticker;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locks one locker holds, and the store's side of each one's life after its grant, in one place: adoption of a
 * grant (the handle built from its request), renewal and the validity watchdog (through the {@link LeaseKeeper}),
 * {@code extend}, {@code release}, {@code releaseAfter} and the deletes it defers, the clean-up of a lost lease, the
 * non-re-entrancy rule, and the release of what is still held when the locker closes. The acquisition paths adopt
 * grants here; a {@link DefaultRemoteLock} handle (which keeps its own state: held, released or lost) calls nothing
 * else; the locker's close releases what is left.
 */
final class HeldLocks {

    private static final Logger log = LoggerFactory.getLogger(HeldLocks.class);

    /** Marks a lock taken by an asynchronous call: the re-entrancy check ignores it. */
    static final long NO_THREAD = -1;

    private final LockBackend backend;
    private final LeaseKeeper keeper;
    private final Ticker ticker;
    private final Clock clock;
    private final Executor listenerExecutor;
    /** Keeps time only (the deferred deletes); never blocks. */
    private final ScheduledExecutorService scheduler;
    /** Blocking work: the clean-up and deferred releases. */
    private final Executor workers;

    private final Waiters waiters;
    private final LockerFailures failures;
    private final ReentrancyGuard guard = new ReentrancyGuard();
    private final ConcurrentHashMap<DefaultRemoteLock, Held> held = new ConcurrentHashMap<>();
    /** Leases given up by {@link RemoteLock#releaseAfter} whose entries are still to be deleted. */
    private final Set<Lease> delayedReleases = ConcurrentHashMap.newKeySet();
    /** The locker's lock-delay: how long a lost lock's entry is left in the store before it is cleaned up. */
    private final Duration lockDelay;

    /** What is kept about a held lock until it is released or lost. */
    private record Held(long threadId, LeaseKeeper.Tracking tracking) {}

    HeldLocks(
            LockBackend backend,
            LeaseKeeper keeper,
            Ticker ticker,
            Clock clock,
            Executor listenerExecutor,
            ScheduledExecutorService scheduler,
            Executor workers,
            Waiters waiters,
            LockerFailures failures,
            Duration lockDelay) {
        this.lockDelay = lockDelay;
        this.backend = backend;
        this.keeper = keeper;
        this.ticker = ticker;
        this.clock = clock;
        this.listenerExecutor = listenerExecutor;
        this.scheduler = scheduler;
        this.workers = workers;
        this.waiters = waiters;
        this.failures = failures;
    }

    Ticker ticker() {
        return ticker;
    }

    Clock clock() {
        return clock;
    }

    /** Where a handle's loss listeners run when registered without an executor. */
    Executor listenerExecutor() {
        return listenerExecutor;
    }

    /**
     * Seed 003's non-re-entrancy rule: throws if {@code thread} holds {@code key} through this locker (a thread of
     * {@link #NO_THREAD} never does).
     */
    void refuseReentry(LockKind kind, String key, long thread) {
        guard.check(kind, key, thread);
    }

    /**
     * Turns a granted lease into a held lock, its handle built from the grant's request. A grant that is already stale
     * (its validity ran out before it reached us) or was reported lost before it was handed over is released at once
     * and gives empty; so is a grant that races with the locker's close, which then throws {@link
     * LockerClosedException}. The lock's renewals, loss and release are reported to the hold {@code observed} gives.
     *
     * @param thread the thread that will hold it, or {@link #NO_THREAD} for an asynchronous call
     */
    Optional<RemoteLock> adopt(PendingGrant grant, Lease lease, long thread, Observing.Acquisition observed) {
        DefaultRemoteLock lock = new DefaultRemoteLock(this, grant.request(), lease, grant.fixed());
        if (!grant.handOver(lock) || lock.grantExpired()) {
            log.debug("Grant of lock '{}' to {} was stale or lost on arrival; released", lock.key(), lock.ownerId());
            lock.discard();
            releaseQuietly(lease);
            return Optional.empty();
        }
        boolean open = waiters.whileOpen(() -> {
            lock.observedBy(observed.granted(lock)); // before renewals and losses can be reported
            held.put(lock, new Held(thread, keeper.track(lock)));
        });
        if (!open) {
            lock.discard();
            releaseQuietly(lease);
            throw failures.closed();
        }
        if (thread != NO_THREAD) {
            guard.register(lock.kind(), lock.key(), thread, lock);
        }
        if (!lock.inHeldState()) {
            forget(lock); // lost between the grant and the bookkeeping: stop what was just started
            // The loss may have come before the hold was there to hear it; a hold hears of its end once
            lock.hold().lost(lock.lossReason());
        }
        if (log.isDebugEnabled()) { // three arguments: a varargs array, made for nothing when debug is off
            log.debug("Acquired lock '{}' as {} (token {})", lock.key(), lock.ownerId(), lease.fencingToken());
        }
        return Optional.of(lock);
    }

    /** The backend's keep-alive of {@code lock}'s lease fails, or works again; nothing if it is no longer kept. */
    void keepAliveFailing(DefaultRemoteLock lock, boolean failing) {
        Held h = held.get(lock);
        if (h != null) {
            h.tracking().failing(failing);
        }
    }

    /** Stops keeping a lock that left the held state: its renewal, watchdog and re-entrancy entry. */
    private void forget(DefaultRemoteLock lock) {
        Held h = held.remove(lock);
        if (h != null) {
            h.tracking().stop();
            if (h.threadId() != NO_THREAD) {
                guard.unregister(lock.kind(), lock.key(), h.threadId(), lock);
            }
        }
    }

    /**
     * A held lock was found lost: stops keeping it, and deletes its entry in the background if the store still has it
     * (the renewal failed, not the store), only if still ours; with a lock-delay, once the delay has passed.
     */
    void lost(DefaultRemoteLock lock) {
        forget(lock);
        Lease lease = lock.lease();
        if (!lockDelay.isZero()) {
            // Not at once: a holder that finds its lock lost by its own clock (thawed from a pause, its renewals
            // unanswered) would otherwise free the key before its onLost listeners have run, which the lock-delay is
            // there to prevent. The entry is deleted, if still ours, once the delay has passed.
            deleteAfter(lease, lockDelay);
            return;
        }
        try {
            workers.execute(() -> releaseQuietly(lease));
        } catch (RejectedExecutionException closing) {
            releaseQuietly(lease);
        }
    }

    /**
     * {@link RemoteLock#release} of a lock just given up by its handle: stops keeping it and deletes its entry.
     * {@link ReleaseResult#ALREADY_LOST} if the store no longer held it for this owner.
     *
     * @throws LockBackendException if the store could not be told; its lease then runs out by itself
     */
    ReleaseResult release(DefaultRemoteLock lock) {
        forget(lock);
        boolean freed;
        // A thread with its interrupt flag set still releases (a worker shutting down): the backend's wait for the
        // store's answer must not see the flag, which is given back afterwards.
        boolean interrupted = Thread.interrupted();
        try {
            freed = backend.release(lock.lease());
        } catch (LockBackendException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockBackendException(
                    "Could not release lock '" + lock.key() + "' (owner " + lock.ownerId()
                            + "); the store frees it when its lease runs out: " + e,
                    e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (!freed) {
            log.warn("Lock '{}' of owner {} was no longer held by the store when released", lock.key(), lock.ownerId());
            return ReleaseResult.ALREADY_LOST;
        }
        return ReleaseResult.RELEASED;
    }

    /** {@link RemoteLock#extend} of a held lock: false if the lock is no longer held through this locker. */
    boolean extend(DefaultRemoteLock lock, Duration leaseTime) {
        Held h = held.get(lock);
        try {
            return h != null && h.tracking().fix(leaseTime);
        } catch (RuntimeException e) {
            throw failures.backend(lock.key(), "extend", e);
        }
    }

    /**
     * {@link RemoteLock#releaseAfter} of a lock just given up by its handle: stops keeping it, sets the store's lease to
     * end after {@code delay} (TTL backends), and deletes the entry then.
     */
    ReleaseResult releaseAfter(DefaultRemoteLock lock, Duration delay) {
        Held h = held.remove(lock);
        if (h == null) {
            return ReleaseResult.ALREADY_RELEASED; // given up by the locker's close meanwhile
        }
        if (h.threadId() != NO_THREAD) {
            guard.unregister(lock.kind(), lock.key(), h.threadId(), lock);
        }
        Lease lease = lock.lease();
        boolean ours;
        try {
            ours = h.tracking().endAfter(delay);
        } catch (RuntimeException e) {
            deleteAfter(lease, delay); // the store keeps its previous lease, which may end later
            throw failures.backend(lock.key(), "releaseAfter", e);
        }
        if (!ours) {
            log.warn("Lock '{}' of owner {} was no longer held by the store when released", lock.key(), lock.ownerId());
            return ReleaseResult.ALREADY_LOST;
        }
        deleteAfter(lease, delay);
        return ReleaseResult.RELEASED;
    }

    /** Deletes the lease's entry {@code delay} from now, or at the locker's close ({@link #deleteDeferredNow}). */
    private void deleteAfter(Lease lease, Duration delay) {
        Runnable release = () -> {
            if (delayedReleases.remove(lease)) {
                releaseQuietly(lease);
            }
        };
        delayedReleases.add(lease);
        try {
            scheduler.schedule(() -> workers.execute(release), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            release.run();
        }
    }

    /** The locker closes: releases every lock still held (a failure is logged, the lease runs out by itself). */
    void releaseAll(String backendName) {
        List<DefaultRemoteLock> still = new ArrayList<>(held.keySet());
        if (!still.isEmpty()) {
            log.info("Closing the {} locker: releasing {} lock(s) still held", backendName, still.size());
        }
        for (DefaultRemoteLock lock : still) {
            try {
                lock.release();
            } catch (RuntimeException e) {
                log.warn(
                        "Could not release lock '{}' on close; its lease runs out by itself: {}",
                        lock.key(),
                        e.toString());
            }
        }
    }

    /** The locker of a session backend closes: deletes the entries whose deferred delete is still due. */
    void deleteDeferredNow() {
        new ArrayList<>(delayedReleases)
                .stream().filter(delayedReleases::remove).forEach(this::releaseQuietly);
    }

    private void releaseQuietly(Lease lease) {
        try {
            backend.release(lease);
        } catch (RuntimeException e) {
            log.debug("Could not free lease of '{}'; it runs out by itself: {}", lease.key(), e.toString());
        }
    }
}
