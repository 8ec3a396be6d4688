package io.distlock.internal;

import io.distlock.LockObserver;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.util.Optional;

/**
 * The synchronous acquisition paths, written once for every {@link RequestKind}: {@link #acquire} waits on the
 * calling thread until a deadline, {@link #attempt} tries once. Each call is observed (through the locker's {@link
 * Observing}, which is silent when no observer was set) and ends exactly once; while in the backend it counts as a
 * waiter of the {@link Waiters}, so that closing the locker interrupts it and waits for it to leave; its grant is
 * adopted by the {@link HeldLocks}, still counted as a waiter, so that a grant racing with the close is released before
 * the backend disconnects. A stale grant (or one lost before it was handed over) is released: a wait goes on, an
 * attempt counts as not granted. Called by the locker's {@code lock} and {@code tryLock} methods, by {@link
 * MultiKeyLocking} for each key, and by {@link AsyncAcquirer} for {@code tryLockAsync}.
 */
final class Acquirer {

    private final LockBackend backend;
    private final HeldLocks held;
    private final Waiters waiters;
    private final Observing observing;
    private final LockerFailures failures;

    /** Stored with every entry, in its owner id. */
    private final String ownerLabel;

    Acquirer(
            LockBackend backend,
            HeldLocks held,
            Waiters waiters,
            Observing observing,
            LockerFailures failures,
            String ownerLabel) {
        this.ownerLabel = ownerLabel;
        this.backend = backend;
        this.held = held;
        this.waiters = waiters;
        this.observing = observing;
        this.failures = failures;
    }

    /**
     * {@code lock}: waits for {@code ask} on the calling thread until {@code deadline}.
     *
     * @throws LockTimeoutException when the deadline passed
     * @throws IllegalStateException when the calling thread holds the key through this locker already
     */
    RemoteLock lock(Ask ask, Deadline deadline) throws InterruptedException {
        waiters.ensureOpen();
        long thread = Thread.currentThread().getId();
        held.refuseReentry(ask.lockKind(), ask.key(), thread);
        return acquire(ask, deadline, thread)
                .orElseThrow(() ->
                        new LockTimeoutException(ask.key(), deadline.maxWait().orElseThrow()));
    }

    /**
     * {@code tryLock}: one attempt at {@code ask} on the calling thread; empty when the key is taken.
     *
     * @throws IllegalStateException when the calling thread holds the key through this locker already
     */
    Optional<RemoteLock> tryLock(Ask ask) {
        waiters.ensureOpen();
        long thread = Thread.currentThread().getId();
        held.refuseReentry(ask.lockKind(), ask.key(), thread);
        return attempt(ask, thread);
    }

    /**
     * Acquires through the backend on the calling thread and adopts the lease; a stale grant is released and the wait
     * goes on. Empty when the deadline passed.
     *
     * @param thread the thread that will hold the lock (see {@link HeldLocks#adopt})
     */
    Optional<RemoteLock> acquire(Ask ask, Deadline deadline, long thread) throws InterruptedException {
        String key = ask.key();
        Observing.Acquisition observed = observing.started(key, LockObserver.Kind.LOCK, ask.lockKind());
        try {
            if (Thread.interrupted()) {
                // java.util.concurrent's convention: an interrupted caller is not served, even when the key is free
                throw interruptedBefore(key);
            }
            while (true) {
                PendingGrant grant = nextTry(ask);
                Waiters.BlockedThread waiter = waiters.enterBlocked();
                Optional<Lease> lease;
                Optional<RemoteLock> adopted = Optional.empty();
                try {
                    try {
                        lease = ask.kind().acquire(backend, grant.request(), deadline);
                    } catch (InterruptedException e) {
                        if (waiter.closedMeanwhile()) {
                            throw failures.closed();
                        }
                        throw e;
                    } catch (RuntimeException e) {
                        if (waiter.closedMeanwhile()) {
                            throw failures.closed();
                        }
                        throw failures.backend(key, "lock", e);
                    }
                    if (lease.isPresent()) {
                        adopted = held.adopt(grant, lease.get(), thread, observed);
                    }
                } finally {
                    waiters.leave(waiter);
                }
                if (adopted.isPresent()) {
                    return adopted;
                }
                if (lease.isEmpty() || deadline.hasPassed()) {
                    // empty only when the deadline passed, so it has a wait: what the caller is given next
                    observed.ended(
                            LockObserver.Outcome.TIMED_OUT,
                            new LockTimeoutException(key, deadline.maxWait().orElseThrow()));
                    return Optional.empty();
                }
            }
        } catch (InterruptedException | RuntimeException e) {
            observed.ended(Observing.outcomeOf(e), e);
            throw e;
        }
    }

    /**
     * One attempt; a stale grant (or one lost before it was handed over) is released and counts as not granted. The
     * attempt counts as a waiter until adopted, so that the locker's close interrupts it and waits for it to leave.
     *
     * @param thread the thread that will hold the lock (see {@link HeldLocks#adopt})
     */
    Optional<RemoteLock> attempt(Ask ask, long thread) {
        String key = ask.key();
        Observing.Acquisition observed = observing.started(key, LockObserver.Kind.TRY_LOCK, ask.lockKind());
        try {
            PendingGrant grant = nextTry(ask);
            Waiters.BlockedThread waiter = waiters.enterBlocked();
            Optional<RemoteLock> lock;
            try {
                Optional<Lease> lease;
                try {
                    lease = ask.kind().tryAcquire(backend, grant.request());
                } catch (RuntimeException e) {
                    if (waiter.closedMeanwhile()) {
                        throw failures.closed();
                    }
                    throw failures.backend(key, "tryLock", e);
                }
                lock = lease.flatMap(l -> held.adopt(grant, l, thread, observed));
            } finally {
                waiters.leave(waiter);
            }
            if (lock.isEmpty()) {
                observed.ended(LockObserver.Outcome.BUSY, null);
            }
            return lock;
        } catch (RuntimeException e) {
            observed.ended(Observing.outcomeOf(e), e);
            throw e;
        }
    }

    /** What a caller interrupted before it asks is given (java.util.concurrent's convention). */
    static InterruptedException interruptedBefore(String key) {
        return new InterruptedException("Lock '" + key + "' not taken: the calling thread was interrupted");
    }

    /**
     * The next try at {@code ask}: a request with a fresh owner id carrying the ask's own owner label, else this
     * locker's.
     */
    PendingGrant nextTry(Ask ask) {
        return ask.next(ownerLabel);
    }
}
