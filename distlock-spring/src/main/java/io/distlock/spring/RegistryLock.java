package io.distlock.spring;

import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The lock {@link RemoteLockRegistry#obtain} returns for one key: a local {@link ReentrantLock} for ownership and the
 * hold count, and one store lock taken on the first hold and released on the last, as Spring Integration's own
 * registries do. Only the owning thread may unlock it.
 */
final class RegistryLock implements DistributedLock {

    private final RemoteLocker locker;
    private final String key;
    private final Ticker ticker;
    private final ReentrantLock local = new ReentrantLock();

    /** The store lock of the current holder; written only by the thread holding {@link #local}. */
    private volatile RemoteLock held;

    private volatile long lastUsedNanos;

    RegistryLock(RemoteLocker locker, String key, Ticker ticker) {
        this.locker = locker;
        this.key = key;
        this.ticker = ticker;
        this.lastUsedNanos = ticker.read();
    }

    /** A request to the store, made holding {@link #local}. */
    @FunctionalInterface
    private interface StoreAttempt {
        Optional<RemoteLock> call() throws InterruptedException;
    }

    @Override
    public void lock() {
        local.lock();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    holdInStore(() -> Optional.of(locker.lock(key)));
                    return;
                } catch (InterruptedException e) {
                    // lock() is not interruptible: wait on, and give the flag back when done
                    interrupted = true;
                } catch (RuntimeException e) {
                    local.unlock();
                    throw e;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        try {
            holdInStore(() -> Optional.of(locker.lock(key)));
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        if (!local.tryLock()) {
            return false;
        }
        try {
            return holdOrUnlock(() -> locker.tryLock(key));
        } catch (InterruptedException e) {
            throw new AssertionError("tryLock(key) does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        long deadline = ticker.read() + unit.toNanos(time);
        if (!local.tryLock(time, unit)) {
            return false;
        }
        return holdOrUnlock(() -> lockWithin(Duration.ofNanos(deadline - ticker.read()), this::plainAttempt));
    }

    @Override
    public void lock(Duration ttl) {
        throw new UnsupportedOperationException("Fixed leases are not available yet");
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        throw new UnsupportedOperationException("Fixed leases are not available yet");
    }

    private Optional<RemoteLock> plainAttempt(Duration maxWait) throws InterruptedException {
        return Optional.of(locker.lock(key, maxWait));
    }

    /** A wait of at most {@code maxWait}: one attempt if nothing is left of it, empty if it runs out. */
    private Optional<RemoteLock> lockWithin(Duration maxWait, TimedAttempt attempt) throws InterruptedException {
        if (maxWait.isNegative() || maxWait.isZero()) {
            return locker.tryLock(key);
        }
        try {
            return attempt.within(maxWait);
        } catch (LockTimeoutException e) {
            return Optional.empty();
        }
    }

    /** A store request that waits at most a given time. */
    @FunctionalInterface
    private interface TimedAttempt {
        Optional<RemoteLock> within(Duration maxWait) throws InterruptedException;
    }

    /** Holding {@link #local}: asks the store and gives {@link #local} back if the store lock is not ours. */
    private boolean holdOrUnlock(StoreAttempt attempt) throws InterruptedException {
        boolean granted = false;
        try {
            granted = holdInStore(attempt);
            return granted;
        } finally {
            if (!granted) {
                local.unlock();
            }
        }
    }

    /**
     * Holding {@link #local}: whether this thread now holds the store lock. A re-entry keeps the store lock this
     * thread holds; the first hold, and a re-entry after the store lock was lost, ask the store (as Spring's registries
     * ask theirs on every acquisition, which is how {@code LockRegistryLeaderInitiator} notices a lost lock).
     */
    private boolean holdInStore(StoreAttempt attempt) throws InterruptedException {
        RemoteLock current = held;
        if (local.getHoldCount() > 1 && current != null && current.isHeld()) {
            return true;
        }
        Optional<RemoteLock> granted = attempt.call();
        if (granted.isEmpty()) {
            return false;
        }
        held = granted.get();
        touch();
        return true;
    }

    /**
     * Gives back one hold; the last one releases the store lock.
     *
     * @throws IllegalStateException if the calling thread does not hold this lock, or (on the last hold) if the store
     *     lock was lost before: its lease ran out or its entry was deleted, so what it guarded may have been changed by
     *     another owner meanwhile. The lock is given up all the same.
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("Lock '" + key + "' is not held by this thread ("
                    + Thread.currentThread().getName() + "): only the thread that locked it may unlock it");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        RemoteLock current = held;
        held = null;
        // an interrupted thread still releases (a stopped LockRegistryLeaderInitiator unlocks on one); flag kept
        boolean interrupted = Thread.interrupted();
        ReleaseResult result;
        try {
            result = current.release();
        } finally {
            local.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (result == ReleaseResult.ALREADY_LOST) {
            throw new IllegalStateException("Lock '" + key + "' was lost before it was unlocked (its lease ran out or"
                    + " its entry was deleted in the store): another owner may have held it meanwhile");
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
    }

    /** Whether some thread of this process holds this lock. */
    boolean isLocked() {
        return local.isLocked();
    }

    /** The store lock if some thread of this process holds this lock and it is not lost. */
    Optional<RemoteLock> storeLock() {
        RemoteLock current = held;
        return local.isLocked() && current != null && current.isHeld() ? Optional.of(current) : Optional.empty();
    }

    /** Marks the lock used now (obtained or acquired), for {@link RemoteLockRegistry#expireUnusedOlderThan}. */
    void touch() {
        lastUsedNanos = ticker.read();
    }

    /** Whether no thread holds this lock and it was last used before {@code nanos} (ticker time). */
    boolean unusedSince(long nanos) {
        return !local.isLocked() && lastUsedNanos - nanos < 0;
    }

    String key() {
        return key;
    }

    @Override
    public String toString() {
        return "RegistryLock[" + key + ", " + (local.isLocked() ? "locked" : "unlocked") + "]";
    }
}
