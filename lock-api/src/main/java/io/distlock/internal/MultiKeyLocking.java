package io.distlock.internal;

import io.distlock.LockBackendException;
import io.distlock.LockKind;
import io.distlock.LockLostException;
import io.distlock.LockTimeoutException;
import io.distlock.LockedCall;
import io.distlock.LockedRun;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Locking several keys as one: {@link #lockAll} (seeds 001 and 003: one global order, so that overlapping sets cannot
 * wait on each other in a cycle; all or none), and {@link #runHolding}, the {@code withLock} and {@code withLocks}
 * actions that release what they hold (a single key's is a group of one), last-first. Each key is taken through the
 * {@link Acquirer}; the group's handle is a {@link DefaultLockGroup}. Called by the locker.
 */
final class MultiKeyLocking {

    /** A lock renewed for as long as it is held (not a fixed lease). */
    private static final Optional<Duration> RENEWED = Optional.empty();

    private final Acquirer acquirer;
    private final HeldLocks held;
    private final Waiters waiters;
    private final Ticker ticker;
    private final Duration leaseTime;
    private final Executor listenerExecutor;

    MultiKeyLocking(
            Acquirer acquirer,
            HeldLocks held,
            Waiters waiters,
            Ticker ticker,
            Duration leaseTime,
            Executor listenerExecutor) {
        this.acquirer = acquirer;
        this.held = held;
        this.waiters = waiters;
        this.ticker = ticker;
        this.leaseTime = leaseTime;
        this.listenerExecutor = listenerExecutor;
    }

    /**
     * {@code lockAll}: takes an exclusive lock on every key, in sorted order, within {@code maxWait} in all; on any
     * failure releases those taken, last-first, and throws.
     *
     * @throws LockTimeoutException naming the key whose wait ran out
     * @throws LockBackendException when a lock taken first was lost before the last one was granted
     */
    RemoteLockGroup lockAll(Collection<String> keys, Duration maxWait) throws InterruptedException {
        List<String> sorted = Checks.keys(keys);
        Checks.positive(maxWait, "maxWait");
        waiters.ensureOpen();
        long thread = Thread.currentThread().getId();
        for (String key : sorted) {
            held.refuseReentry(LockKind.LOCK, key, thread);
        }
        Deadline deadline = Deadline.after(maxWait, ticker);
        List<RemoteLock> taken = new ArrayList<>(sorted.size());
        boolean complete = false;
        try {
            for (String key : sorted) {
                // Seeds 001 and 003: one global order, so overlapping sets cannot wait on each other in a cycle.
                Optional<RemoteLock> lock = acquirer.acquire(Ask.exclusive(key, RENEWED, leaseTime), deadline, thread);
                if (lock.isEmpty()) {
                    throw new LockTimeoutException(key, maxWait);
                }
                taken.add(lock.get());
            }
            // A lock taken first can be lost while a later one is awaited (its renewals failed through an outage):
            // the group would not be one of held locks.
            for (RemoteLock lock : taken) {
                if (!lock.isHeld()) {
                    throw new LockBackendException("Could not take the locks on " + sorted + ": the lock on '"
                            + lock.key() + "' was lost before the last one was granted; none is left held");
                }
            }
            complete = true;
            return new DefaultLockGroup(taken, listenerExecutor);
        } finally {
            if (!complete) {
                DefaultLockGroup.releaseInReverse(taken);
            }
        }
    }

    /** {@code action} as a call that returns nothing. */
    static <X extends Exception> LockedCall<Void, X> asCall(LockedRun<X> action) {
        return () -> {
            action.run();
            return null;
        };
    }

    /**
     * Seed 003's {@code try ... after}: runs the action, always releases, and reports a lease lost meanwhile: as a
     * {@link LockLostException} when the action succeeded, as one suppressed by the action's own failure otherwise.
     */
    static <T, X extends Exception> T runHolding(List<RemoteLock> locks, LockedCall<T, X> action) throws X {
        T result;
        try {
            result = action.call();
        } catch (Throwable failure) {
            List<String> lost = new ArrayList<>();
            RuntimeException releaseFailure = releaseAll(locks, lost);
            if (!lost.isEmpty()) {
                failure.addSuppressed(new LockLostException(lost.get(0)));
            }
            if (releaseFailure != null) {
                failure.addSuppressed(releaseFailure);
            }
            throw failure;
        }
        List<String> lost = new ArrayList<>();
        RuntimeException releaseFailure = releaseAll(locks, lost);
        if (!lost.isEmpty()) {
            LockLostException e = new LockLostException(lost.get(0));
            if (releaseFailure != null) {
                e.addSuppressed(releaseFailure);
            }
            throw e;
        }
        if (releaseFailure != null) {
            throw releaseFailure;
        }
        return result;
    }

    /** Releases last-first, adding the keys found lost to {@code lost}; returns the first failure, rest suppressed. */
    private static RuntimeException releaseAll(List<RemoteLock> locks, List<String> lost) {
        RuntimeException releaseFailure = null;
        for (int i = locks.size() - 1; i >= 0; i--) {
            try {
                if (locks.get(i).release() == ReleaseResult.ALREADY_LOST) {
                    lost.add(locks.get(i).key());
                }
            } catch (RuntimeException e) {
                if (releaseFailure == null) {
                    releaseFailure = e;
                } else {
                    releaseFailure.addSuppressed(e);
                }
            }
        }
        return releaseFailure;
    }
}
