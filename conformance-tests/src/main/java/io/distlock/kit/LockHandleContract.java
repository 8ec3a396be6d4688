package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The lock handle: release is idempotent, allowed from any thread, and locks are not re-entrant (seed 003) — a
 * thread asking again for a key it holds through the same locker fails at once, while another thread of that locker
 * waits as usual.
 */
public interface LockHandleContract extends LockerFixture {

    /** Releasing twice is a no-op the second time: {@link ReleaseResult#ALREADY_RELEASED}, and close() is silent. */
    @Test
    default void release_twice_isNoOp() throws Exception {
        String key = TestKeys.unique("release-twice");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock lock = lockers.get(0).lock(key, maxWait());
            assertTrue(lock.isHeld());
            assertEquals(ReleaseResult.RELEASED, lock.release(), "first release");
            assertFalse(lock.isHeld(), "isHeld() after release");
            assertEquals(ReleaseResult.ALREADY_RELEASED, lock.release(), "second release");
            lock.close();
            lock.close();
            RemoteLock next =
                    lockers.get(1).tryLock(key).orElseThrow(() -> new AssertionError("key free after release"));
            try {
                lock.close(); // the old handle must not touch the new holder's lock
                assertTrue(next.isHeld());
                assertTrue(lockers.get(0).tryLock(key).isEmpty(), "the old handle's close() freed the new holder");
            } finally {
                next.close();
            }
        }
    }

    /** A lock taken on one thread may be released on another; the key is free afterwards. */
    @Test
    default void release_fromAnotherThread_isAllowed() throws Exception {
        String key = TestKeys.unique("release-elsewhere");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock lock = lockers.get(0).lock(key, maxWait());
            CompletableFuture<ReleaseResult> released = CompletableFuture.supplyAsync(lock::release);
            assertEquals(ReleaseResult.RELEASED, released.get(maxWait().toMillis(), TimeUnit.MILLISECONDS));
            Optional<RemoteLock> next = lockers.get(1).tryLock(key);
            next.ifPresent(RemoteLock::close);
            assertTrue(next.isPresent(), "the key is free after a release from another thread");
        }
    }

    /**
     * A thread whose interrupt flag is set can still release its lock (a shutting-down worker, a cancelled task): the
     * key is free afterwards, and the flag is still set.
     */
    @Test
    default void release_onAnInterruptedThread_freesTheLock_andKeepsTheFlag() throws Exception {
        String key = TestKeys.unique("release-interrupted");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock lock = lockers.get(0).lock(key, maxWait());
            ReleaseResult result;
            boolean flagAfter;
            Thread.currentThread().interrupt();
            try {
                result = lock.release();
            } finally {
                flagAfter = Thread.interrupted();
            }
            assertEquals(ReleaseResult.RELEASED, result, "release on an interrupted thread");
            assertTrue(flagAfter, "release cleared the caller's interrupt flag");
            Optional<RemoteLock> next = lockers.get(1).tryLock(key);
            next.ifPresent(RemoteLock::close);
            assertTrue(next.isPresent(), "the key is free after a release on an interrupted thread");
        }
    }

    /**
     * Not re-entrant: the holding thread asking its locker again for the key gets {@link IllegalStateException} at
     * once (lock, timed lock, tryLock, lockAll), while another thread of the same locker waits normally and gets the
     * lock once it is released.
     */
    @Test
    default void lock_reentrantSameThreadSameLocker_failsAtOnce_otherThreadWaits() throws Exception {
        String key = TestKeys.unique("reentrant");
        Duration quick = TestTimeouts.scaled(Duration.ofSeconds(2));
        try (RemoteLocker locker = openLocker(leaseTime())) {
            RemoteLock held = locker.lock(key, maxWait());
            AtomicReference<RemoteLock> second = new AtomicReference<>();
            Thread other;
            try {
                long start = System.nanoTime();
                assertThrows(IllegalStateException.class, () -> locker.lock(key), "re-entrant lock(key)");
                assertThrows(IllegalStateException.class, () -> locker.lock(key, maxWait()), "re-entrant lock(key, w)");
                assertThrows(IllegalStateException.class, () -> locker.tryLock(key), "re-entrant tryLock");
                assertThrows(
                        IllegalStateException.class,
                        () -> locker.lockAll(List.of(key, key + "-other"), maxWait()),
                        "re-entrant lockAll");
                assertTrue(
                        System.nanoTime() - start < quick.toNanos(),
                        "re-entrant calls must fail at once, took " + Duration.ofNanos(System.nanoTime() - start));
                other = new Thread(() -> {
                    try {
                        second.set(locker.lock(key, maxWait()));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                other.setDaemon(true);
                other.start();
                assertTrue(
                        Deadlines.holdsFor(TestTimeouts.scaled(Duration.ofMillis(300)), () -> second.get() == null),
                        "another thread of the locker got the lock while it was held");
                assertTrue(other.isAlive(), "another thread of the locker should be waiting, not failing");
            } finally {
                held.close();
            }
            other.join(maxWait().toMillis());
            assertTrue(second.get() != null, "the waiting thread got the lock after the release");
            assertTrue(second.get().isHeld());
            assertEquals(ReleaseResult.RELEASED, second.get().release());
            assertTrue(Lockers.isFree(locker, key), "the holder thread may take the key again once released");
        }
    }
}
