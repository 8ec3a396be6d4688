package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.distlock.LeaseModel;
import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.internal.OwnerIds;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Leases (seed 000 section 5.3): a lease nobody renews runs out in the store; a renewed lease keeps the lock past
 * many lease times; a stale handle cannot free the next holder's lock; and a lease the holder lost is reported to it
 * ({@code isHeld()} false, {@code onLost} fired once).
 */
public interface LeaseContract extends LockerFixture {

    /** Reason for skipping the tests that stage a lost TTL lease inside one JVM. */
    String SESSION_SKIP = "backend declares LeaseModel.SESSION: the lock lives with the client's session, which no"
            + " unrenewed TTL ends; the multi-process tests kill and freeze the holder's process instead";

    /**
     * A lease granted through the SPI and never renewed runs out: another locker gets the lock within the lease time
     * plus {@link #expirySlack()}, and not before the lease was granted.
     */
    @Test
    default void lease_notRenewed_expiresWithinTtlPlusSlack() throws Exception {
        assumeTrue(Lockers.capabilities(this).leaseModel() == LeaseModel.RENEWED_TTL, SESSION_SKIP);
        String key = TestKeys.unique("expiry");
        Duration ttl = shortLeaseTime();
        try (LockBackend raw = openBackend(ttl);
                RemoteLocker other = openLocker(leaseTime())) {
            Optional<Lease> lease = raw.tryAcquire(new LockRequest(key, OwnerIds.next(), ttl, reason -> {}));
            assertTrue(lease.isPresent(), "tryAcquire through the SPI on a free key");
            long granted = System.nanoTime();
            assertFalse(Lockers.isFree(other, key), "another locker took '" + key + "' right after it was granted");
            Duration bound = ttl.plus(expirySlack());
            try (RemoteLock next = other.lock(key, bound)) {
                assertTrue(next.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "a lease of " + ttl + " that nobody renewed still held '" + key + "' after " + bound
                                + " (lease time + slack): leases never expire?",
                        e);
            }
            assertTrue(
                    System.nanoTime() - granted >= ttl.toNanos() / 2,
                    "the unrenewed lease of " + ttl + " was freed after only "
                            + Duration.ofNanos(System.nanoTime() - granted));
            raw.release(lease.get());
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
            boolean exclusive;
            try {
                exclusive = Deadlines.holdsFor(ttl.multipliedBy(3), () -> {
                    Optional<RemoteLock> stolen = other.tryLock(key);
                    stolen.ifPresent(RemoteLock::close);
                    return stolen.isEmpty() && held.isHeld();
                });
                assertTrue(
                        exclusive,
                        "within 3 lease times of " + ttl + " the renewed lock was lost or taken by another locker"
                                + " (isHeld=" + held.isHeld() + ", onLost fired " + lost.get() + " times)");
                assertEquals(0, lost.get(), "onLost fired for a lock that was renewed");
            } finally {
                assertEquals(ReleaseResult.RELEASED, held.release(), "release of the renewed lock");
            }
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
    default void release_withStaleHandle_keepsNewHolder() throws Exception {
        assumeTrue(Lockers.capabilities(this).leaseModel() == LeaseModel.RENEWED_TTL, SESSION_SKIP);
        String key = TestKeys.unique("stale-release");
        Duration ttl = shortLeaseTime();
        try (LockBackend raw = openBackend(ttl);
                Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            Lease stale = raw.tryAcquire(new LockRequest(key, OwnerIds.next(), ttl, reason -> {}))
                    .orElseThrow(() -> new AssertionError("tryAcquire through the SPI on a free key"));
            RemoteLock next = lockers.get(0).lock(key, ttl.plus(expirySlack()));
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
     * The store drops a held lock behind its holder's back (the kit releases the lease through the SPI, as a store
     * failover or an operator would): the holder's next renewal learns it, {@code isHeld()} turns false and {@code
     * onLost} fires exactly once, and the handle's release reports {@link ReleaseResult#ALREADY_LOST}.
     */
    @Test
    default void lostLease_whenStoreDropsIt_isReportedOnce() throws Exception {
        assumeTrue(Lockers.capabilities(this).leaseModel() == LeaseModel.RENEWED_TTL, SESSION_SKIP);
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
                    "the store dropped the lock on '" + key + "' but onLost did not fire within " + bound
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
    default void lostLease_whenRenewalsFail_isReportedAndLockPassesOn() throws Exception {
        assumeTrue(Lockers.capabilities(this).leaseModel() == LeaseModel.RENEWED_TTL, SESSION_SKIP);
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
            RemoteLock next;
            try {
                next = others.get(0).lock(key, bound);
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the holder stopped renewing, yet '" + key + "' was not free within " + bound, e);
            }
            try {
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
