package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.OwnerIds;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Leases (seed 000 section 5.3): a lease nobody renews runs out in the store; a renewed lease keeps the lock past
 * many lease times; a stale handle can neither free nor extend the next holder's lock; and a lease the holder lost is
 * reported to it ({@code isHeld()} false, {@code onLost} fired once) and was never reported valid past the next
 * holder's grant.
 */
public interface LeaseContract extends LockerFixture {

    /**
     * A lease granted through the SPI and never renewed runs out: another locker gets the lock within the lease time
     * plus {@link #expirySlack()}, and not before the lease was granted.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void lease_notRenewed_expiresWithinTtlPlusSlack() throws Exception {
        String key = TestKeys.unique("expiry");
        Duration ttl = shortLeaseTime();
        try (LockBackend raw = openBackend(ttl);
                RemoteLocker other = openLocker(leaseTime())) {
            Optional<Lease> lease = raw.tryAcquire(new LockRequest(key, OwnerIds.next(), ttl, reason -> {}));
            assertTrue(lease.isPresent(), "tryAcquire through the SPI on a free key");
            long granted = System.nanoTime();
            assertFalse(Lockers.isFree(other, key), "another locker took '" + key + "' right after it was granted");
            Duration bound = ttl.plus(expirySlack());
            try (RemoteLock next = Lockers.lock(
                    other,
                    key,
                    bound,
                    () -> "a lease of " + DurationText.of(ttl) + " that nobody renewed still held '" + key + "' after "
                            + DurationText.of(bound) + " (lease time + slack): leases never expire?")) {
                assertTrue(next.isHeld());
            }
            assertTrue(
                    System.nanoTime() - granted >= ttl.toNanos() / 2,
                    "the unrenewed lease of " + DurationText.of(ttl) + " was freed after only "
                            + Duration.ofNanos(System.nanoTime() - granted));
            raw.release(lease.get());
        }
    }

    /** Releases {@code held} after {@code failure}, adding a failing release to it as suppressed. */
    private static void releaseAfterFailure(RemoteLock held, Throwable failure) {
        try {
            held.release();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * A held lock whose lease the locker renews stays held, exclusively, for three lease times: another locker's
     * {@code tryLock} fails all along, and succeeds once the holder releases.
     */
    @Test
    default void renewal_keepsLockPastSeveralTtls_exclusively() throws Exception {
        String key = TestKeys.unique("renewal");
        Duration ttl = shortLeaseTime();
        try (RemoteLocker holderLocker = openLocker(ttl);
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> lost.incrementAndGet());
            try {
                boolean exclusive = Deadlines.holdsFor(ttl.multipliedBy(3), () -> {
                    Optional<RemoteLock> stolen = other.tryLock(key);
                    stolen.ifPresent(RemoteLock::close);
                    return stolen.isEmpty() && held.isHeld();
                });
                assertTrue(
                        exclusive,
                        "within 3 lease times of " + DurationText.of(ttl)
                                + " the renewed lock was lost or taken by another locker" + " (isHeld=" + held.isHeld()
                                + ", onLost fired " + lost.get() + " times)");
                assertEquals(0, lost.get(), "onLost fired for a lock that was renewed");
            } catch (AssertionError | RuntimeException e) {
                releaseAfterFailure(held, e); // the failure above is the one to report, not the release's
                throw e;
            }
            assertEquals(ReleaseResult.RELEASED, held.release(), "release of the renewed lock");
            Optional<RemoteLock> after = other.tryLock(key);
            after.ifPresent(RemoteLock::close);
            assertTrue(after.isPresent(), "tryLock after the renewed lock was released");
        }
    }

    /**
     * A stale handle cannot free the next holder's lock: a lease that ran out, then another owner took the key, then
     * {@code release(oldLease)} through the SPI must leave the new holder's lock in place.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void release_withStaleHandle_keepsNewHolder() throws Exception {
        String key = TestKeys.unique("stale-release");
        Duration ttl = shortLeaseTime();
        try (LockBackend raw = openBackend(ttl);
                Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            Lease stale = raw.tryAcquire(new LockRequest(key, OwnerIds.next(), ttl, reason -> {}))
                    .orElseThrow(() -> new AssertionError("tryAcquire through the SPI on a free key"));
            Duration bound = ttl.plus(expirySlack());
            RemoteLock next = Lockers.lock(
                    lockers.get(0),
                    key,
                    bound,
                    () -> "a lease of " + DurationText.of(ttl) + " that nobody renewed still held '" + key + "' after "
                            + DurationText.of(bound));
            try {
                raw.release(stale);
                assertTrue(next.isHeld(), "the new holder's lock after a stale release");
                Optional<RemoteLock> third = lockers.get(1).tryLock(key);
                third.ifPresent(RemoteLock::close);
                assertFalse(
                        third.isPresent(),
                        "a third locker took '" + key
                                + "' after the stale lease's release freed the new holder's lock");
            } finally {
                next.close();
            }
        }
    }

    /**
     * A stale lease cannot be renewed: a lease that ran out, then another owner took the key, then {@code
     * renew(oldLease)} through the SPI must return empty (the store no longer holds it for this owner), and must not
     * extend the new holder's entry: the new holder's lease, granted through the SPI and never renewed, still runs out
     * within its lease time plus {@link #expirySlack()} while the stale lease keeps being renewed.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void renew_withStaleHandle_returnsEmpty_keepsNewHoldersExpiry() throws Exception {
        String key = TestKeys.unique("stale-renew");
        Duration ttl = shortLeaseTime();
        Duration bound = ttl.plus(expirySlack());
        try (LockBackend raw = openBackend(ttl);
                RemoteLocker third = openLocker(leaseTime())) {
            Lease stale = raw.tryAcquire(new LockRequest(key, OwnerIds.next(), ttl, reason -> {}))
                    .orElseThrow(() -> new AssertionError("tryAcquire through the SPI on a free key"));
            Lease next = raw.acquire(
                            new LockRequest(key, OwnerIds.next(), ttl, reason -> {}),
                            Deadline.after(bound, Ticker.system()))
                    .orElseThrow(() -> new AssertionError("a lease of " + DurationText.of(ttl)
                            + " that nobody renewed still held '" + key + "' after " + DurationText.of(bound)));
            long nextGranted = System.nanoTime();
            try {
                OptionalLong renewed = raw.renew(stale, ttl);
                assertTrue(
                        renewed.isEmpty(),
                        "renew of a stale lease (it ran out and another owner took '" + key + "') returned " + renewed
                                + "; it must return empty: does renew check the owner (a plain PEXPIRE does not)?");
                // Keep renewing the stale lease: an owner-blind renewal would keep the new holder's entry alive.
                Duration renewEvery = ttl.dividedBy(4);
                boolean freed = Deadlines.within(bound, () -> {
                    raw.renew(stale, ttl);
                    if (Lockers.isFree(third, key)) {
                        return true;
                    }
                    try {
                        Thread.sleep(renewEvery.toMillis());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return false;
                });
                assertTrue(
                        freed,
                        "the new holder's unrenewed lease of " + DurationText.of(ttl) + " on '" + key
                                + "' still held after " + DurationText.of(bound)
                                + " while the stale lease was being renewed: renew extends the entry whoever holds"
                                + " it");
                assertTrue(
                        System.nanoTime() - nextGranted >= ttl.toNanos() / 2,
                        "the new holder's lease of " + DurationText.of(ttl) + " was freed after only "
                                + Duration.ofNanos(System.nanoTime() - nextGranted));
            } finally {
                raw.release(next);
            }
        }
    }

    /**
     * The store drops a held lock behind its holder's back (the kit releases the lease through the SPI, as a store
     * failover or an operator would): the holder's next renewal learns it, {@code isHeld()} turns false and {@code
     * onLost} fires exactly once, and the handle's release reports {@link ReleaseResult#ALREADY_LOST}.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void lostLease_whenStoreDropsIt_isReportedOnce() throws Exception {
        String key = TestKeys.unique("dropped");
        Duration ttl = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker holderLocker =
                lockerBuilder().leaseTime(ttl).provider(intercepting).build()) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> lost.incrementAndGet());
            intercepting.dropBehindLockersBack(key);
            Duration bound = ttl.plus(expirySlack());
            assertTrue(
                    Deadlines.within(bound, () -> lost.get() > 0),
                    "the store dropped the lock on '" + key + "' but onLost did not fire within "
                            + DurationText.of(bound)
                            + " (isHeld=" + held.isHeld() + "): a renewal that says yes for a lease the store no longer"
                            + " holds?");
            assertFalse(held.isHeld(), "isHeld() after onLost fired");
            assertTrue(Deadlines.holdsFor(ttl, () -> lost.get() == 1), "onLost fired " + lost.get() + " times");
            assertEquals(ReleaseResult.ALREADY_LOST, held.release(), "release of a lost lock");
        }
    }

    /**
     * The holder's renewals fail (the store is unreachable from it): once the lease runs out the store frees the
     * lock for another locker within the lease time plus {@link #expirySlack()}; the old holder sees {@code isHeld()}
     * false and {@code onLost} once; its release reports {@link ReleaseResult#ALREADY_LOST} and leaves the new
     * holder's lock in place.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void lostLease_whenRenewalsFail_isReportedAndLockPassesOn() throws Exception {
        String key = TestKeys.unique("unrenewed");
        Duration ttl = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker holderLocker =
                        lockerBuilder().leaseTime(ttl).provider(intercepting).build();
                Lockers others = Lockers.open(this, 2, leaseTime())) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> lost.incrementAndGet());
            intercepting.failRenewals();
            Duration bound = ttl.plus(expirySlack());
            RemoteLock next = Lockers.lock(
                    others.get(0),
                    key,
                    bound,
                    () -> "the holder stopped renewing, yet '" + key + "' was not free within "
                            + DurationText.of(bound));
            long grantedBy = intercepting.now();
            try {
                long validUntil = intercepting
                        .lastValidUntil(held.ownerId())
                        .orElseThrow(() -> new AssertionError("no validity was reported for the grant of " + held));
                assertTrue(
                        validUntil - grantedBy <= 0,
                        () -> "validity too generous: the lost lease was reported valid until "
                                + Duration.ofNanos(validUntil - grantedBy).toMillis() + " ms after another owner was"
                                + " granted '" + key + "', so isHeld() said true while another owner held the lock"
                                + " (validity must be measured from before the request and never exceed what the store"
                                + " guarantees)");
                assertTrue(
                        Deadlines.within(expirySlack(), () -> lost.get() > 0 && !held.isHeld()),
                        "another owner holds '" + key + "' but the old holder was not told: isHeld=" + held.isHeld()
                                + ", onLost fired " + lost.get() + " times");
                assertEquals(ReleaseResult.ALREADY_LOST, held.release(), "release of the lost lock");
                assertTrue(next.isHeld(), "the new holder's lock after the old holder's release");
                Optional<RemoteLock> third = others.get(1).tryLock(key);
                third.ifPresent(RemoteLock::close);
                assertFalse(third.isPresent(), "the old holder's release freed the new holder's lock");
                assertEquals(1, lost.get(), "onLost calls");
            } finally {
                next.close();
            }
        }
    }
}
