package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockBackendException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What a lock does when its store fails under it, through the fixture's {@link StoreFaults}: one error model for a
 * store that is down (every call fails with {@link LockBackendException} within about {@code connectTimeout},
 * deadline or not, and the locker works again once the store is back), and a lock entry deleted behind its holder's
 * back (the holder is told within the bound the backend promises).
 */
public interface StoreFaultContract extends LockerFixture {

    /** The {@code connectTimeout} of the lockers of these tests, before scaling. */
    Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    /**
     * With every store node down, {@code tryLock(k)}, {@code lock(k, connectTimeout)} and {@code lock(k)} (no
     * deadline) each fail with {@link LockBackendException} — not a timeout, not a hang — no later than {@code
     * connectTimeout} plus {@link #expirySlack()} after the call; once the store is back, the same locker takes the
     * key (within {@link #maxWait()}: its client reconnects on its own schedule).
     */
    @Test
    @Requires(Need.STORE_FAULTS)
    default void storeDown_tryLock_lock_andLockWithoutDeadline_failWithBackendException_withinConnectTimeout()
            throws Exception {
        StoreFaults faults = storeFaults().orElseThrow();
        String key = TestKeys.unique("store-down");
        Duration connectTimeout = TestTimeouts.scaled(CONNECT_TIMEOUT);
        Duration bound = connectTimeout.plus(expirySlack());
        try (RemoteLocker locker = lockerBuilder()
                .leaseTime(leaseTime())
                .connectTimeout(connectTimeout)
                .build()) {
            locker.lock(key, maxWait()).release(); // connected, and the key's place in the store exists
            faults.stopStore();
            try {
                FailingCalls.assertFailsWithin(
                        "tryLock(k)",
                        "with the store down",
                        bound,
                        () -> locker.tryLock(key),
                        LockBackendException.class);
                FailingCalls.assertFailsWithin(
                        "lock(k, " + DurationText.of(connectTimeout) + ")",
                        "with the store down",
                        bound,
                        () -> locker.lock(key, connectTimeout),
                        LockBackendException.class);
                FailingCalls.assertFailsWithin(
                        "lock(k)", "with the store down", bound, () -> locker.lock(key), LockBackendException.class);
            } finally {
                faults.startStore();
            }
            // the client reconnects on its own schedule; until it has, calls fail as above
            AtomicReference<RemoteLock> again = new AtomicReference<>();
            boolean taken = Deadlines.within(maxWait(), () -> {
                try {
                    locker.tryLock(key).ifPresent(again::set);
                } catch (LockBackendException notYet) {
                    // not reconnected yet
                }
                return again.get() != null;
            });
            assertTrue(taken, "the locker did not take '" + key + "' within " + maxWait() + " of the store's restart");
            assertEquals(ReleaseResult.RELEASED, again.get().release());
        }
        try (RemoteLocker other = openLocker(leaseTime())) {
            assertTrue(Lockers.isFree(other, key), "'" + key + "' is not free after the outage and a release");
        }
    }

    /**
     * A lock entry an operator deletes behind the holder's back: the holder is told within {@link
     * StoreFaults#deletionNoticedWithin()} ({@code isHeld()} false, {@code onLost} once), its release answers {@link
     * ReleaseResult#ALREADY_LOST}, and another locker can take the key.
     */
    @Test
    @Requires(Need.STORE_FAULTS)
    default void lockEntryDeletedOutOfBand_holderIsToldWithinTheBound() throws Exception {
        StoreFaults faults = storeFaults().orElseThrow();
        String key = TestKeys.unique("deleted");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock held = lockers.get(0).lock(key, maxWait());
            CountDownLatch lost = new CountDownLatch(1);
            held.onLost(l -> lost.countDown());
            faults.deleteLockEntry(key);
            long start = System.nanoTime();
            Duration bound = TestTimeouts.scaled(faults.deletionNoticedWithin());
            assertTrue(
                    lost.await(bound.toNanos(), TimeUnit.NANOSECONDS),
                    "the holder of '" + key + "' was not told within " + DurationText.of(bound)
                            + " that its entry was deleted");
            Duration told = Duration.ofNanos(System.nanoTime() - start);
            assertFalse(held.isHeld(), "isHeld() after onLost");
            assertEquals(ReleaseResult.ALREADY_LOST, held.release(), "release of a lock deleted out of band");
            assertTrue(
                    lockers.get(1)
                            .tryLock(key)
                            .map(l -> l.release() == ReleaseResult.RELEASED)
                            .orElse(false),
                    "another locker cannot take '" + key + "' after its entry was deleted (told after "
                            + DurationText.of(told) + ")");
        }
    }

    /** The same for a {@code lockAll} group: deleting one of its entries loses the group within the bound. */
    @Test
    @Requires(Need.STORE_FAULTS)
    default void lockEntryOfAGroupDeletedOutOfBand_groupIsToldWithinTheBound() throws Exception {
        StoreFaults faults = storeFaults().orElseThrow();
        String first = TestKeys.unique("group-deleted-a");
        String second = first.replace("-a", "-b");
        try (RemoteLocker locker = openLocker(leaseTime())) {
            RemoteLockGroup group = locker.lockAll(List.of(first, second), maxWait());
            CountDownLatch lost = new CountDownLatch(1);
            group.onLost(g -> lost.countDown());
            faults.deleteLockEntry(second);
            Duration bound = TestTimeouts.scaled(faults.deletionNoticedWithin());
            assertTrue(
                    lost.await(bound.toNanos(), TimeUnit.NANOSECONDS),
                    "the group holding '" + second + "' was not told within " + DurationText.of(bound)
                            + " that its entry was deleted");
            assertFalse(group.isHeld(), "the group's isHeld() after onLost");
            group.close();
        }
        try (RemoteLocker other = openLocker(leaseTime())) {
            assertTrue(Lockers.isFree(other, first), "'" + first + "' is not free after the group was closed");
        }
    }
}
