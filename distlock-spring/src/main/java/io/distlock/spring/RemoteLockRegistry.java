package io.distlock.spring;

import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
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
 *   <li>{@code unlock()} by a thread that does not hold the lock throws {@link IllegalStateException}; the last {@code
 *       unlock()} of a lock lost in the store throws {@link java.util.ConcurrentModificationException}, as Spring's
 *       registries do (the lost lock is given up all the same); the last {@code unlock()} releases the store lock also
 *       on an interrupted thread, and leaves its interrupt flag set;
 *   <li>{@code newCondition()} throws {@link UnsupportedOperationException}.
 * </ul>
 *
 * <p>{@code lock()} and the other {@link java.util.concurrent.locks.Lock} methods take a store lock the locker keeps
 * alive while it is held (renewing its lease, or through the store's session). {@link DistributedLock#lock(Duration)}
 * and {@link DistributedLock#tryLock(Duration, Duration)} take it for a <em>fixed lease</em> of {@code ttl} that the
 * locker does not renew ({@link RemoteLocker#tryLockFor}): it ends {@code ttl} after its grant unless renewed with
 * {@link #renewLock}, and a holder that dies holds it at most that long; if it ends while held, the lock is lost. A
 * re-entry with a {@code ttl} sets the held lock's lease to end {@code ttl} from now; a plain re-entry leaves the lease
 * as it is. Store failures reach the caller as the locker's {@link
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
     * Renews the lock on {@code lockKey}, held by a thread of this process: a lock taken with a {@code ttl} ({@link
     * DistributedLock#lock(Duration)}, {@link DistributedLock#tryLock(Duration, Duration)}) or given one by {@link
     * #renewLock(Object, Duration)} gets that lease again from now; a lock the locker renews by itself is only checked
     * (nothing is sent to the store).
     *
     * @throws IllegalStateException if no thread of this process holds the lock, or it was lost in the store
     */
    @Override
    public void renewLock(Object lockKey) {
        held(lockKey).renew(Optional.empty());
    }

    /**
     * Sets the lease of the lock on {@code lockKey}, held by a thread of this process, to end {@code ttl} from now,
     * and stops the locker's renewal of it ({@link io.distlock.RemoteLock#extend}): from then on it is a fixed lease,
     * lost when it runs out unless renewed again.
     *
     * @throws IllegalArgumentException if {@code ttl} is not positive
     * @throws IllegalStateException if no thread of this process holds the lock, or it was lost in the store
     * @throws io.distlock.LockBackendException if the store could not be told; the lease keeps its previous end
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        held(lockKey).renew(Optional.of(Objects.requireNonNull(ttl, "ttl")));
    }

    private RegistryLock held(Object lockKey) {
        String key = keyOf(lockKey);
        RegistryLock lock = locks.get(key);
        if (lock == null) {
            throw new IllegalStateException("Could not renew lock '" + key + "': it is not held in this process");
        }
        return lock;
    }

    /** The number of keys whose locks this registry keeps (held or not yet expired). */
    int size() {
        return locks.size();
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
