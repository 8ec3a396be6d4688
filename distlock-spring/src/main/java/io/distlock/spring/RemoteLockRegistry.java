package io.distlock.spring;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * Spring Integration's {@link LockRegistry} over a {@link RemoteLocker}, on any distlock backend.
 *
 * <p>{@link #obtain(Object)} returns one lock per key (the same instance until {@link #expireUnusedOlderThan} drops it
 * unused), which behaves as the locks of Spring's own registries ({@code RedisLockRegistry}, {@code JdbcLockRegistry}):
 *
 * <ul>
 *   <li>{@code lock()}, {@code lockInterruptibly()}, {@code tryLock()} and {@code tryLock(time, unit)} take the lock in
 *       this process (a {@link java.util.concurrent.locks.ReentrantLock}) and then in the store; {@code lock()} is not
 *       interruptible and re-sets the thread's interrupt flag when it returns;
 *   <li>re-entrant for the owning thread: the hold count is kept here, the store holds one lock, taken on the first
 *       hold and released on the last {@code unlock()}; a re-entry after the store lock was lost asks the store again
 *       (so {@code LockRegistryLeaderInitiator}'s heartbeat notices the loss);
 *   <li>{@code unlock()} by a thread that does not hold the lock, and the last {@code unlock()} of a lock lost in the
 *       store, throw {@link IllegalStateException} (the lost lock is given up all the same); the last {@code
 *       unlock()} releases the store lock also on an interrupted thread, and leaves its interrupt flag set;
 *   <li>{@code newCondition()} throws {@link UnsupportedOperationException}.
 * </ul>
 *
 * <p>The locker keeps the store lock alive while it is held (renewing its lease, or through the store's session), so
 * {@link #renewLock(Object)} only checks that it is still held. Store failures reach the caller as the locker's {@link
 * io.distlock.LockBackendException}; a closed locker as {@link io.distlock.LockerClosedException}. The registry does
 * not own the locker: close the locker yourself (the Spring Boot auto-configuration closes it with the context).
 * Thread-safe.
 */
public final class RemoteLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    private final RemoteLocker locker;
    private final Ticker ticker;
    private final ConcurrentMap<String, RegistryLock> locks = new ConcurrentHashMap<>();

    /**
     * A registry whose locks are taken through {@code locker}.
     *
     * @param locker the locker to take the store locks with; the registry does not close it
     */
    public RemoteLockRegistry(RemoteLocker locker) {
        this(locker, Ticker.system());
    }

    RemoteLockRegistry(RemoteLocker locker, Ticker ticker) {
        this.locker = Objects.requireNonNull(locker, "locker");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    /**
     * The lock for {@code lockKey}: the same instance for the same key while it is in use.
     *
     * @param lockKey the key, a {@link String} that is a valid distlock key (see {@link RemoteLocker})
     * @throws IllegalArgumentException if {@code lockKey} is not a {@link String}
     * @throws NullPointerException if {@code lockKey} is null
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String key = keyOf(lockKey);
        return locks.compute(key, (k, existing) -> {
            RegistryLock lock = existing != null ? existing : new RegistryLock(locker, k, ticker);
            lock.touch();
            return lock;
        });
    }

    /**
     * Drops the locks that no thread of this process holds and that were last obtained or acquired more than {@code
     * age} milliseconds ago, so that a registry used with many keys does not grow without bound.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long before = ticker.read() - TimeUnit.MILLISECONDS.toNanos(age);
        for (String key : locks.keySet()) {
            locks.computeIfPresent(key, (k, lock) -> lock.unusedSince(before) ? null : lock);
        }
    }

    /**
     * Checks that the lock on {@code lockKey} is held in this process and in the store. The locker renews the store
     * lock by itself while it is held, so nothing is sent to the store.
     *
     * @throws IllegalStateException if no thread of this process holds the lock, or it was lost in the store
     */
    @Override
    public void renewLock(Object lockKey) {
        heldStoreLock(lockKey);
    }

    /**
     * Not available yet: the lease of a held lock cannot be set to a given time.
     *
     * @throws UnsupportedOperationException always
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        throw new UnsupportedOperationException("Fixed leases are not available yet");
    }

    /** The number of keys whose locks this registry keeps (held or not yet expired). */
    int size() {
        return locks.size();
    }

    private RemoteLock heldStoreLock(Object lockKey) {
        String key = keyOf(lockKey);
        RegistryLock lock = locks.get(key);
        if (lock == null || !lock.isLocked()) {
            throw new IllegalStateException("Could not renew lock '" + key + "': it is not held in this process");
        }
        return lock.storeLock()
                .orElseThrow(() -> new IllegalStateException("Could not renew lock '" + key
                        + "': it was lost in the store (its lease ran out or its" + " entry was deleted)"));
    }

    private static String keyOf(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException(
                    "Lock keys must be strings; got a " + lockKey.getClass().getName());
        }
        return key;
    }

    @Override
    public String toString() {
        return "RemoteLockRegistry[" + locks.size() + " keys]";
    }
}
