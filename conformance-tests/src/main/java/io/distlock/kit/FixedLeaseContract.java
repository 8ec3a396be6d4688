package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.OwnerIds;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Fixed leases, the locks of schedulers ({@link RemoteLocker#tryLockFor}, {@link RemoteLocker#lockFor}, {@link
 * RemoteLock#extend}, {@link RemoteLock#releaseAfter}): a fixed lease is not renewed and ends when its time is up, the
 * key staying taken until then and free soon after; an extension moves that end either way; a release after a delay
 * keeps the key taken for the delay, not less, and frees it after; and through the SPI, a renewal with a shorter lease
 * shortens the entry in the store.
 */
public interface FixedLeaseContract extends LockerFixture {

    /**
     * {@code lockFor} on a free key holds it for its lease and no longer: another locker cannot take it meanwhile, gets
     * it within the lease plus {@link #expirySlack()}, and the holder is told the lock is lost.
     */
    @Test
    default void lockFor_holdsItsLease_thenEnds_andTellsTheHolder() throws Exception {
        String key = TestKeys.unique("fixed");
        Duration lease = shortLeaseTime();
        try (RemoteLocker holder = openLocker(leaseTime());
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock held = holder.lockFor(key, lease, maxWait());
            long granted = System.nanoTime();
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> lost.incrementAndGet());
            assertFalse(Lockers.isFree(other, key), "another locker took '" + key + "' while its fixed lease ran");
            Duration bound = lease.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    granted,
                    lease.dividedBy(2),
                    () -> "a fixed lease of " + DurationText.of(lease) + " still held '" + key + "' after "
                            + DurationText.of(bound) + " (lease + slack): is it renewed, or never ended?");
            assertFalse(held.isHeld(), "isHeld() of a fixed lease that ended");
            Deadlines.await(
                    () -> lost.get() == 1,
                    expirySlack(),
                    () -> "onLost of a fixed lease that ended fired " + lost.get() + " times, expected once");
            assertEquals(ReleaseResult.ALREADY_LOST, held.release(), "release of a fixed lease that ended");
            RemoteLock again = holder.lockFor(key, lease); // without a bound on the wait: the key is free
            assertTrue(again.isHeld(), "lockFor(key, leaseTime) on a free key");
            assertEquals(ReleaseResult.RELEASED, again.release(), "release of a held fixed lease");
        }
    }

    /**
     * {@code releaseAfter(delay)} gives the handle up at once but keeps the key taken for the whole delay: nobody,
     * the releasing thread included, takes it sooner; another locker waiting for it gets it after the delay, within
     * {@link #expirySlack()}. No loss is reported.
     */
    @Test
    default void releaseAfter_keepsTheKeyTakenForTheDelay_thenFreesIt() throws Exception {
        String key = TestKeys.unique("release-after");
        Duration delay = shortLeaseTime();
        try (RemoteLocker holder = openLocker(leaseTime());
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock held = holder.tryLock(key).orElseThrow(() -> new AssertionError("tryLock on a free key"));
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> lost.incrementAndGet());
            long called = System.nanoTime();
            assertEquals(ReleaseResult.RELEASED, held.releaseAfter(delay), "releaseAfter of a held lock");
            assertFalse(held.isHeld(), "isHeld() right after releaseAfter");
            assertEquals(ReleaseResult.ALREADY_RELEASED, held.release(), "release() after releaseAfter");
            Optional<RemoteLock> again = holder.tryLock(key); // not re-entrant any more: an ordinary busy attempt
            again.ifPresent(RemoteLock::close);
            assertFalse(again.isPresent(), "the releasing thread took '" + key + "' again during the delay");
            Duration bound = delay.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    called,
                    delay,
                    () -> "'" + key + "' was still taken " + DurationText.of(bound) + " after releaseAfter("
                            + DurationText.of(delay) + ")");
            assertEquals(0, lost.get(), "onLost fired for a lock released after a delay");
        }
    }

    /**
     * A holder that dies during its fixed lease (its locker goes silent: no renewal, no release reaches the store)
     * still holds the key for no longer than the lease: the store ends the entry by itself, and another locker gets the
     * key within the lease plus {@link #expirySlack()} (ShedLock's {@code lockAtMostFor}).
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void lockFor_ofAHolderThatDies_endsInTheStoreWithItsLease() throws Exception {
        String key = TestKeys.unique("fixed-dies");
        Duration lease = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker holder = silenceable(intercepting);
                RemoteLocker other = openLocker(leaseTime())) {
            holder.lockFor(key, lease, maxWait());
            long granted = System.nanoTime();
            intercepting.goSilent();
            Duration bound = lease.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    granted,
                    lease.dividedBy(2),
                    () -> "the fixed lease of " + DurationText.of(lease) + " of a holder that died still held '" + key
                            + "' after " + DurationText.of(bound)
                            + ": was it granted with the locker's lease instead?");
        }
    }

    /**
     * A holder that calls {@code releaseAfter(delay)} and then dies (its locker goes silent) still keeps the key
     * taken for the whole delay and no longer than the delay plus {@link #expirySlack()}: the store itself ends the
     * entry (ShedLock's {@code lockAtLeastFor} across a crash).
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void releaseAfter_ofAHolderThatDies_endsInTheStoreAfterTheDelay() throws Exception {
        String key = TestKeys.unique("release-after-dies");
        Duration delay = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker holder = silenceable(intercepting);
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock held = holder.tryLock(key).orElseThrow(() -> new AssertionError("tryLock on a free key"));
            long called = System.nanoTime();
            assertEquals(ReleaseResult.RELEASED, held.releaseAfter(delay), "releaseAfter of a held lock");
            intercepting.goSilent();
            assertFalse(
                    Lockers.isFree(other, key),
                    "'" + key + "' was free right after releaseAfter(" + DurationText.of(delay) + ")");
            Duration bound = delay.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    called,
                    delay,
                    () -> "the holder died after releaseAfter(" + DurationText.of(delay) + "), yet '" + key
                            + "' was still taken after " + DurationText.of(bound)
                            + ": did the store keep the old lease?");
        }
    }

    /**
     * Takes {@code key} through {@code other} within {@code bound} and releases it; fails if that took less than {@code
     * notBefore} since {@code since} (a {@link System#nanoTime()} reading), or {@code stillTaken} if it took longer.
     */
    private static void takenWithin(
            RemoteLocker other, String key, Duration bound, long since, Duration notBefore, Supplier<String> stillTaken)
            throws InterruptedException {
        try (RemoteLock next = Lockers.lock(other, key, bound, stillTaken)) {
            long after = System.nanoTime() - since;
            assertTrue(
                    after >= notBefore.toNanos(),
                    "'" + key + "' was free again after only " + Duration.ofNanos(after) + ", expected at least "
                            + DurationText.of(notBefore));
            assertTrue(next.isHeld());
        }
    }

    /** A holder whose locker {@code intercepting} can silence, renewing with a lease longer than the test. */
    private RemoteLocker silenceable(InterceptingProvider intercepting) {
        return lockerBuilder()
                .leaseTime(longerThanTheTest())
                .provider(intercepting)
                .build();
    }

    /** A lease longer than any of these tests' waits: what must not decide when a fixed lease ends. */
    private Duration longerThanTheTest() {
        return shortLeaseTime().plus(expirySlack()).multipliedBy(3);
    }

    /**
     * {@code extend} moves a fixed lease's end both ways: lengthened to three leases, the lock stays held and exclusive
     * past twice the first lease; then shortened, it ends within the new lease plus {@link #expirySlack()}.
     */
    @Test
    default void extend_movesAFixedLeasesEnd_laterAndSooner() throws Exception {
        String key = TestKeys.unique("extend");
        Duration lease = shortLeaseTime();
        try (RemoteLocker holder = openLocker(leaseTime());
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock held =
                    holder.tryLockFor(key, lease).orElseThrow(() -> new AssertionError("tryLockFor on a free key"));
            assertTrue(held.extend(lease.multipliedBy(3)), "extend of a held fixed lease");
            boolean kept = Deadlines.holdsFor(lease.multipliedBy(2), () -> {
                Optional<RemoteLock> stolen = other.tryLock(key);
                stolen.ifPresent(RemoteLock::close);
                return stolen.isEmpty() && held.isHeld();
            });
            assertTrue(
                    kept,
                    "a fixed lease of " + DurationText.of(lease) + " extended to "
                            + DurationText.of(lease.multipliedBy(3))
                            + " was lost or taken within " + DurationText.of(lease.multipliedBy(2)) + " (isHeld="
                            + held.isHeld()
                            + ")");
            assertTrue(held.extend(lease), "shortening a held fixed lease");
            long shortened = System.nanoTime();
            Duration bound = lease.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    shortened,
                    lease.dividedBy(2),
                    () -> "a lease shortened to " + DurationText.of(lease) + " still held '" + key + "' after "
                            + DurationText.of(bound));
            assertFalse(held.extend(lease), "extend of a lock whose lease ended");
        }
    }

    /**
     * {@code extend} turns a renewed lock into a fixed lease: no longer renewed, it ends within the new lease plus
     * {@link #expirySlack()}. A released lock cannot be extended.
     */
    @Test
    default void extend_ofARenewedLock_stopsItsRenewal() throws Exception {
        String key = TestKeys.unique("extend-renewed");
        Duration lease = shortLeaseTime();
        try (RemoteLocker holder = openLocker(leaseTime());
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock held = holder.tryLock(key).orElseThrow(() -> new AssertionError("tryLock on a free key"));
            assertTrue(held.extend(lease), "extend of a held renewed lock");
            Duration bound = lease.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    System.nanoTime(),
                    Duration.ZERO,
                    () -> "a renewed lock extended to " + DurationText.of(lease) + " still held '" + key + "' after "
                            + DurationText.of(bound) + ": is it still renewed?");
            assertFalse(held.isHeld(), "isHeld() of the extended lock after another locker took its key");
            RemoteLock second = holder.tryLock(key).orElseThrow(() -> new AssertionError("tryLock on a free key"));
            assertEquals(ReleaseResult.RELEASED, second.release());
            assertFalse(second.extend(lease), "extend of a released lock");
        }
    }

    /** The fixed-lease calls refuse durations that are not positive; {@code releaseAfter(0)} is a release. */
    @Test
    default void fixedLeaseCalls_checkTheirDurations() throws Exception {
        String key = TestKeys.unique("fixed-args");
        try (RemoteLocker locker = openLocker(leaseTime())) {
            assertThrows(IllegalArgumentException.class, () -> locker.tryLockFor(key, Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> locker.tryLockFor(key, Duration.ofSeconds(-1)));
            assertThrows(NullPointerException.class, () -> locker.tryLockFor(key, null));
            assertThrows(IllegalArgumentException.class, () -> locker.lockFor(key, Duration.ZERO, maxWait()));
            assertThrows(IllegalArgumentException.class, () -> locker.lockFor(key, Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> locker.lockFor(key, leaseTime(), Duration.ZERO));
            RemoteLock held = locker.tryLockFor(key, leaseTime())
                    .orElseThrow(() -> new AssertionError("tryLockFor on a free key"));
            assertThrows(IllegalArgumentException.class, () -> held.extend(Duration.ZERO));
            assertThrows(NullPointerException.class, () -> held.releaseAfter(null));
            assertTrue(held.isHeld(), "a refused extend left the lock held");
            assertEquals(ReleaseResult.RELEASED, held.releaseAfter(Duration.ZERO), "releaseAfter(0)");
            assertTrue(Lockers.isFree(locker, key), "releaseAfter(0) left '" + key + "' taken");
        }
    }

    /**
     * Through the SPI, a renewal with a lease shorter than the grant's shortens the entry in the store: another locker
     * gets the key within the short lease plus {@link #expirySlack()}, well before the grant's lease would have ended.
     * This is what {@code releaseAfter} and a shortening {@code extend} rest on when the holder dies.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void renew_withAShorterLease_shortensTheEntryInTheStore() throws Exception {
        String key = TestKeys.unique("shorter");
        Duration granted = longerThanTheTest();
        Duration shorter = shortLeaseTime();
        try (LockBackend raw = openBackend(granted);
                RemoteLocker other = openLocker(leaseTime())) {
            Lease lease = raw.tryAcquire(new LockRequest(key, OwnerIds.next(), granted, reason -> {}))
                    .orElseThrow(() -> new AssertionError("tryAcquire through the SPI on a free key"));
            long renewed = System.nanoTime();
            OptionalLong validUntil = raw.renew(lease, shorter);
            assertTrue(validUntil.isPresent(), "renew(lease, " + DurationText.of(shorter) + ") of a held lease");
            assertFalse(Lockers.isFree(other, key), "'" + key + "' was free right after the shortening renewal");
            Duration bound = shorter.plus(expirySlack());
            takenWithin(
                    other,
                    key,
                    bound,
                    renewed,
                    shorter.dividedBy(2),
                    () -> "an entry renewed for " + DurationText.of(shorter) + " still held '" + key + "' after "
                            + DurationText.of(bound) + ": renew(lease, leaseTime) kept the grant's lease of "
                            + DurationText.of(granted));
            raw.release(lease);
        }
    }
}
