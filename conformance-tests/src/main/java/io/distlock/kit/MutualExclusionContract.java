package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Theorems 1 and 3 of seed 000: the mandatory lock ({@code lock}) and the soft lock ({@code tryLock}) are never held by
 * two owners at once. Many threads, spread over several lockers and sharing each locker, take one key; inside the
 * critical section they run an unguarded read-modify-write and seed 000's ATM, and the history of holds is checked.
 */
public interface MutualExclusionContract extends LockerFixture {

    /** Lockers per test; each is shared by {@link #THREADS_PER_LOCKER} threads. */
    int LOCKERS = 3;

    /** Threads sharing each locker. */
    int THREADS_PER_LOCKER = 2;

    /** Theorem 1: {@code lock} is exclusive among many threads over several lockers on one key. */
    @Test
    default void lock_isExclusive_manyThreadsOneKey_theorem1() throws Exception {
        String key = TestKeys.unique("exclusive-lock");
        UnguardedAccount account = new UnguardedAccount();
        int perThread = acquisitionsPerThread();
        int threads = LOCKERS * THREADS_PER_LOCKER;
        try (Lockers lockers = Lockers.open(this, LOCKERS, leaseTime());
                HistoryRecorder history = HistoryRecorder.inMemory()) {
            Concurrently.run("lock", threads, maxWait().multipliedBy(3), i -> {
                RemoteLocker locker = lockers.get(i);
                for (int n = 0; n < perThread; n++) {
                    try (RemoteLock lock = locker.lock(key, maxWait())) {
                        history.acquired(lock);
                        account.criticalSection(lock.ownerId());
                        history.releasing(lock);
                    }
                }
            });
            account.assertExclusive((long) threads * perThread);
            HistoryChecker.assertConsistent(history.events());
        }
    }

    /** Theorem 3: {@code tryLock} is exclusive among many threads over several lockers on one key. */
    @Test
    default void tryLock_isExclusive_manyThreadsOneKey_theorem3() throws Exception {
        String key = TestKeys.unique("exclusive-trylock");
        UnguardedAccount account = new UnguardedAccount();
        int perThread = acquisitionsPerThread();
        int threads = LOCKERS * THREADS_PER_LOCKER;
        try (Lockers lockers = Lockers.open(this, LOCKERS, leaseTime());
                HistoryRecorder history = HistoryRecorder.inMemory()) {
            Concurrently.run("tryLock", threads, maxWait().multipliedBy(3), i -> {
                RemoteLocker locker = lockers.get(i);
                int done = 0;
                while (done < perThread) {
                    Optional<RemoteLock> maybe = locker.tryLock(key);
                    if (maybe.isEmpty()) {
                        Thread.sleep(1); // the soft lock never waits; the caller decides when to try again
                        continue;
                    }
                    try (RemoteLock lock = maybe.get()) {
                        history.acquired(lock);
                        account.criticalSection(lock.ownerId());
                        history.releasing(lock);
                    }
                    done++;
                }
            });
            account.assertExclusive((long) threads * perThread);
            HistoryChecker.assertConsistent(history.events());
        }
    }

    /**
     * Theorems 1 and 3, one step at a time: while one owner holds a key, {@code tryLock} of another locker and of
     * another thread of the holder's locker is refused and {@code lock} with a short wait times out; once released,
     * the key can be taken.
     */
    @Test
    default void tryLockAndLock_whileAnotherOwnerHolds_areRefused() throws Exception {
        String key = TestKeys.unique("held");
        Duration shortWait = TestTimeouts.scaled(Duration.ofMillis(300));
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLocker holderLocker = lockers.get(0);
            RemoteLocker other = lockers.get(1);
            RemoteLock held = holderLocker.lock(key, maxWait());
            try {
                assertFalse(other.tryLock(key).isPresent(), "tryLock of another locker while '" + key + "' is held");
                assertThrows(
                        LockTimeoutException.class,
                        () -> other.lock(key, shortWait).close(),
                        "lock with a short wait of another locker while '" + key + "' is held");
                AtomicReference<Optional<RemoteLock>> sameLockerOtherThread = new AtomicReference<>();
                Thread t = new Thread(() -> sameLockerOtherThread.set(holderLocker.tryLock(key)));
                t.start();
                t.join(maxWait().toMillis());
                assertFalse(t.isAlive(), "tryLock from another thread of the holder's locker did not return");
                sameLockerOtherThread.get().ifPresent(RemoteLock::close);
                assertFalse(
                        sameLockerOtherThread.get().isPresent(),
                        "tryLock from another thread of the holder's locker while '" + key + "' is held");
                assertTrue(held.isHeld(), "the holder still holds it");
            } finally {
                held.close();
            }
            Optional<RemoteLock> after = other.tryLock(key);
            after.ifPresent(RemoteLock::close);
            assertTrue(after.isPresent(), "tryLock of another locker after the holder released '" + key + "'");
        }
    }
}
