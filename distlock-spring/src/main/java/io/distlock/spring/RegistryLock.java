package io.distlock.spring;

import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.ConcurrentModificationException;
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

    /** The fixed lease {@link #held} was last given (by {@code lock(ttl)} or {@code renewLock}); null if renewed. */
    private volatile Duration fixedLease;

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
        lockUninterruptibly(null);
    }

    /**
     * Takes the lock for a fixed lease of {@code ttl} (not renewed); a re-entry sets the lease to end {@code ttl} from
     * now.
     */
    @Override
    public void lock(Duration ttl) {
        lockUninterruptibly(positive(ttl));
    }

    private void lockUninterruptibly(Duration fixedLease) {
        local.lock();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    holdInStore(() -> Optional.of(acquire(fixedLease)), fixedLease);
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
            holdInStore(() -> Optional.of(acquire(null)), null);
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
            return holdOrUnlock(() -> locker.tryLock(key), null);
        } catch (InterruptedException e) {
            throw new AssertionError("tryLock(key) does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLockWithin(Duration.ofNanos(unit.toNanos(time)), null);
    }

    /** {@link #tryLock(long, TimeUnit)} for a fixed lease of {@code ttl} (not renewed), as {@link #lock(Duration)}. */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        return tryLockWithin(waitTime, positive(ttl));
    }

    private boolean tryLockWithin(Duration wait, Duration fixedLease) throws InterruptedException {
        long deadline = ticker.read() + wait.toNanos();
        if (!local.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        return holdOrUnlock(() -> acquireWithin(Duration.ofNanos(deadline - ticker.read()), fixedLease), fixedLease);
    }

    /** Waits for the store lock as long as it takes: renewed by the locker, or for a fixed lease if one is given. */
    private RemoteLock acquire(Duration fixedLease) throws InterruptedException {
        return fixedLease == null ? locker.lock(key) : locker.lockFor(key, fixedLease);
    }

    /** Waits at most {@code maxWait} for the store lock (one attempt if none is left); empty if not granted. */
    private Optional<RemoteLock> acquireWithin(Duration maxWait, Duration fixedLease) throws InterruptedException {
        if (maxWait.isNegative() || maxWait.isZero()) {
            return fixedLease == null ? locker.tryLock(key) : locker.tryLockFor(key, fixedLease);
        }
        try {
            return Optional.of(
                    fixedLease == null ? locker.lock(key, maxWait) : locker.lockFor(key, fixedLease, maxWait));
        } catch (LockTimeoutException e) {
            return Optional.empty();
        }
    }

    /** Holding {@link #local}: asks the store and gives {@link #local} back if the store lock is not ours. */
    private boolean holdOrUnlock(StoreAttempt attempt, Duration fixedLease) throws InterruptedException {
        boolean granted = false;
        try {
            granted = holdInStore(attempt, fixedLease);
            return granted;
        } finally {
            if (!granted) {
                local.unlock();
            }
        }
    }

    /**
     * Holding {@link #local}: whether this thread now holds the store lock. A re-entry keeps the store lock this
     * thread holds (setting its lease to end {@code fixedLease} from now, if given); the first hold, and a re-entry
     * after the store lock was lost, ask the store (as Spring's registries ask theirs on every acquisition, which is
     * how {@code LockRegistryLeaderInitiator} notices a lost lock).
     *
     * @param fixedLease the fixed lease asked for; null for a lock the locker renews
     */
    private boolean holdInStore(StoreAttempt attempt, Duration fixedLease) throws InterruptedException {
        RemoteLock current = held;
        if (local.getHoldCount() > 1 && current != null && current.isHeld()) {
            if (fixedLease == null) {
                return true;
            }
            if (current.extend(fixedLease)) {
                this.fixedLease = fixedLease;
                return true;
            }
            // lost meanwhile: ask the store as for a first hold
        }
        Optional<RemoteLock> granted = attempt.call();
        if (granted.isEmpty()) {
            return false;
        }
        held = granted.get();
        this.fixedLease = fixedLease;
        touch();
        return true;
    }

    private static Duration positive(Duration ttl) {
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive; got " + DurationText.of(ttl));
        }
        return ttl;
    }

    /**
     * Gives back one hold; the last one releases the store lock.
     *
     * @throws IllegalStateException if the calling thread does not hold this lock
     * @throws ConcurrentModificationException on the last hold, if the store lock was lost before: its lease ran out or
     *     its entry was deleted, so what it guarded may have been changed by another owner meanwhile (the exception
     *     Spring Integration's {@code RedisLockRegistry} and {@code JdbcLockRegistry} throw there). The lock is given
     *     up all the same.
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
        ReleaseResult result;
        try {
            // also on an interrupted thread (a stopped LockRegistryLeaderInitiator unlocks on one): the locker
            // releases regardless of the flag, and leaves it set
            result = current.release();
        } finally {
            local.unlock();
        }
        if (result == ReleaseResult.ALREADY_LOST) {
            throw new ConcurrentModificationException("Lock '" + key + "' was lost before it was unlocked (its lease"
                    + " ran out or its entry was deleted in the store): another owner may have held it meanwhile");
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

    /**
     * Sets the lease of the held store lock to end {@code ttl} from now ({@code RenewableLockRegistry.renewLock}); with
     * no {@code ttl}, renews a fixed lease by the lease it was given, and only checks a lock the locker renews.
     *
     * @throws IllegalStateException if no thread of this process holds the lock, or it was lost in the store
     */
    void renew(Optional<Duration> ttl) {
        if (!local.isLocked()) {
            throw new IllegalStateException("Could not renew lock '" + key + "': it is not held in this process");
        }
        RemoteLock current = held;
        Optional<Duration> lease = ttl.map(RegistryLock::positive).or(() -> Optional.ofNullable(fixedLease));
        boolean stillHeld = current != null && lease.map(current::extend).orElseGet(current::isHeld);
        if (!stillHeld) {
            throw new IllegalStateException("Could not renew lock '" + key
                    + "': it was lost in the store (its lease ran out or its entry was deleted)");
        }
        lease.ifPresent(l -> fixedLease = l);
    }

    /** Marks the lock used now (obtained or acquired), for {@link RemoteLockRegistry#expireUnusedOlderThan}. */
    void touch() {
        lastUsedNanos = ticker.read();
    }

    /** Whether no thread holds this lock and it was last used before {@code nanos} (ticker time). */
    boolean unusedSince(long nanos) {
        return !local.isLocked() && lastUsedNanos - nanos < 0;
    }

    @Override
    public String toString() {
        return "RegistryLock[" + key + ", " + (local.isLocked() ? "locked" : "unlocked") + "]";
    }
}
