package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LeaseModel;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a lock does when its holder's clock is wrong ({@link SkewedTicker} given as the locker's ticker): it jumps
 * forwards or back, or runs fast or slow. A lease is measured on the client's clock, so a slow or back-stepped clock
 * makes the holder believe longer than the store keeps its entry; the backend's drift allowance (the margin it takes
 * off the validity it reports: Redlock's {@code clockDriftFactor}, Cassandra's GlobalTime lead) is what covers a slow
 * clock, and nothing covers a clock that runs slower than that. These tests show each case, with the figures logged:
 * what holds (a clock within the allowance never lets the holder believe past the next grant), what is reported (a
 * jump forwards ends the lock at once and the store frees it, or a session re-measured from the jumped clock keeps it
 * whole), and what breaks, bounded by the skew.
 *
 * <p>The slow and back-stepped cases stop the holder's renewals (as a store it cannot reach would) so that the only
 * thing that ends its belief is its own clock: they need {@link LeaseModel#RENEWED_TTL} leases.
 */
public interface ClockSkewContract extends LockerFixture {

    /** How much later than a limit the 1 ms belief poll may see the holder stop believing. */
    Duration POLL_TOLERANCE = Duration.ofMillis(20);

    /** The rate of the fast clock. */
    double FAST = 1.2;

    /**
     * The holder's clock jumps forwards past its lease. Either the holder gives the lock up at once (a lease measured
     * from the last renewal has run out on its clock: {@code onLost}, {@code isHeld()} false, release {@link
     * ReleaseResult#ALREADY_LOST}) and the store frees the key within the lease or session plus slack — the entry of a
     * lock its owner gave up is not left taken; or, where the next heartbeat re-measures the lease from the jumped
     * clock (a session kept alive), it keeps the lock whole: still held, still the store's, released normally. Which
     * one is logged; anything in between (held but free for others, given up but never freed) fails.
     */
    @Test
    default void clientClockJumpsForwardPastItsLease_holderGivesTheLockUpCleanly_orKeepsItWhole() throws Exception {
        String key = TestKeys.unique("clock-forward");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        Duration freedWithin = Lockers.freedWithin(this, model);
        SkewedTicker clock = new SkewedTicker();
        try (RemoteLocker holder = lockerBuilder()
                        .ticker(clock)
                        .leaseTime(shortLeaseTime())
                        .build();
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock lock = holder.lock(key, maxWait());
            CountDownLatch lost = new CountDownLatch(1);
            lock.onLost(l -> lost.countDown());
            clock.jump(freedWithin.multipliedBy(2));
            if (!lost.await(expirySlack().toNanos(), TimeUnit.NANOSECONDS)) {
                assertTrue(
                        lock.isHeld(),
                        "after its clock jumped forwards the holder of '" + key + "' says it no longer holds the"
                                + " lock, but onLost did not run within " + expirySlack());
                assertFalse(
                        Lockers.isFree(other, key),
                        "after its clock jumped forwards the holder of '" + key + "' still says it holds the lock,"
                                + " but another locker could take it");
                log().info("Clock jumped forwards: the holder of '{}' kept the lock (its lease is re-measured)", key);
                assertEquals(ReleaseResult.RELEASED, lock.release(), "release of the lock kept through the jump");
                return;
            }
            assertFalse(lock.isHeld(), "isHeld() after onLost for the clock's jump");
            long told = System.nanoTime();
            RemoteLock next = Lockers.lock(
                    other,
                    key,
                    freedWithin,
                    () -> "the holder gave '" + key + "' up when its clock jumped forwards, but the store kept the"
                            + " key taken for longer than " + DurationText.of(freedWithin));
            log().info(
                            "Clock jumped forwards: the holder of '{}' gave it up at once, the store freed it {} ms later",
                            key,
                            (System.nanoTime() - told) / 1_000_000);
            assertEquals(ReleaseResult.ALREADY_LOST, lock.release(), "release of a lock given up for the jump");
            assertTrue(next.isHeld(), "the next holder's lock after the old holder's release");
            assertEquals(ReleaseResult.RELEASED, next.release());
        }
    }

    /**
     * The holder's clock jumps back by a lease while its renewals fail: it goes on believing it holds the lock after
     * the store has freed it and another owner holds it — by at most the jump (a jump back cannot be told from time
     * passing slowly; nothing on the client can cover it, fencing tokens can). The figure is logged.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void clientClockJumpsBackWhileRenewalsFail_holderBelievesAtMostTheJumpPastTheNextGrant() throws Exception {
        String key = TestKeys.unique("clock-back");
        Duration jump = shortLeaseTime();
        SkewedTicker clock = new SkewedTicker();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker holder = lockerBuilder()
                        .ticker(clock)
                        .leaseTime(shortLeaseTime())
                        .provider(intercepting)
                        .build();
                RemoteLocker other = openLocker(leaseTime())) {
            RemoteLock lock = holder.lock(key, maxWait());
            intercepting.failRenewals();
            clock.jump(jump.negated());
            try (Belief belief = Belief.of(lock)) {
                long believedPast = believedPastTheNextGrant(other, key, belief, jump);
                log().info(
                                "Clock jumped back {} ms with renewals failing: the holder of '{}' believed it held the lock"
                                        + " {} ms after another owner was granted it",
                                jump.toMillis(),
                                key,
                                believedPast / 1_000_000);
                assertTrue(
                        believedPast <= jump.plus(POLL_TOLERANCE).toNanos(),
                        "after its clock jumped back " + jump.toMillis() + " ms the holder believed it held '" + key
                                + "' " + believedPast / 1_000_000 + " ms after the next grant: more than the jump");
            }
        }
    }

    /**
     * The holder's clock runs slow, within the drift allowance the backend took off the validity it reported (halfway
     * between real time and the slowest rate that allowance covers), while its renewals fail: it stops believing it
     * holds the lock no later than the next grant.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void clientClockRunningSlowWithinTheDriftAllowance_holderNeverBelievesPastTheNextGrant() throws Exception {
        SlowRun run = runSlow(true);
        assertTrue(
                run.believedPastNanos() <= 0,
                "with its clock at " + run.rate() + "x (within the drift allowance, which covers down to "
                        + run.slowestCovered() + "x) the holder believed it held the lock "
                        + run.believedPastNanos() / 1_000_000 + " ms after another owner was granted it");
    }

    /**
     * The holder's clock runs at half speed, far beyond any drift allowance, while its renewals fail: it believes it
     * holds the lock after another owner was granted it — what a slow clock breaks without fencing — by at most what
     * the slow clock adds to the validity it had left.
     */
    @Test
    @Requires(Need.RENEWED_TTL_LEASES)
    default void clientClockRunningAtHalfSpeed_holderBelievesPastTheNextGrant_boundedByTheSkew() throws Exception {
        SlowRun run = runSlow(false);
        long bound = (long) (run.leftNanos() * (1 / run.rate() - 1)) + POLL_TOLERANCE.toNanos();
        assertTrue(
                run.believedPastNanos() <= bound,
                "with its clock at half speed the holder believed it held the lock "
                        + run.believedPastNanos() / 1_000_000
                        + " ms past the next grant, more than the " + bound / 1_000_000 + " ms the slow clock adds to"
                        + " its validity");
    }

    /**
     * The holder's clock runs {@value #FAST} times too fast (a renewal every third of the lease then has half the
     * lease, not two thirds, to land in): renewals come early enough that it keeps the lock through three leases
     * without a loss — a fast clock costs renewals, not the lock.
     */
    @Test
    default void clientClockRunningFast_holderKeepsTheLockThroughSeveralLeases() throws Exception {
        String key = TestKeys.unique("clock-fast");
        SkewedTicker clock = new SkewedTicker();
        try (RemoteLocker holder =
                lockerBuilder().ticker(clock).leaseTime(shortLeaseTime()).build()) {
            RemoteLock lock = holder.lock(key, maxWait());
            AtomicInteger lost = new AtomicInteger();
            lock.onLost(l -> lost.incrementAndGet());
            clock.rate(FAST);
            Duration period = shortLeaseTime().multipliedBy(3);
            assertTrue(
                    Deadlines.holdsFor(period, lock::isHeld),
                    "with its clock " + FAST + "x too fast the holder lost '" + key + "' within "
                            + DurationText.of(period));
            assertEquals(0, lost.get(), "onLost calls");
            assertEquals(ReleaseResult.RELEASED, lock.release());
        }
    }

    /** What a slow-clock run measured. */
    record SlowRun(double rate, double slowestCovered, long leftNanos, long believedPastNanos) {}

    /**
     * Grants a lock, stops its renewals, slows the holder's clock and measures how long after the next grant it still
     * believed it held the lock. {@code withinAllowance}: halfway between 1 and the slowest rate the validity's margin
     * covers; else half speed.
     */
    private SlowRun runSlow(boolean withinAllowance) throws Exception {
        String key = TestKeys.unique(withinAllowance ? "clock-slow" : "clock-half");
        SkewedTicker clock = new SkewedTicker();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        Duration lease = shortLeaseTime();
        try (RemoteLocker holder = lockerBuilder()
                        .ticker(clock)
                        .leaseTime(lease)
                        .provider(intercepting)
                        .build();
                RemoteLocker other = openLocker(leaseTime())) {
            long asked = clock.read(); // the clock runs at real speed until slowed below
            RemoteLock lock = holder.lock(key, maxWait());
            intercepting.failRenewals();
            long validUntil = intercepting
                    .lastValidUntil(lock.ownerId())
                    .orElseThrow(() -> new AssertionError("no validity was reported for the grant of " + lock));
            long now = clock.read();
            long left = validUntil - now;
            long storeKeepsFor = asked + lease.toNanos() - now; // the store's entry lives at least this long
            double slowestCovered = (double) left / storeKeepsFor;
            // With no allowance at all (the validity reaches as far as the store keeps the entry), only a right clock
            // is within.
            double rate = withinAllowance ? Math.min(1, (1 + slowestCovered) / 2) : 0.5;
            clock.rate(rate);
            try (Belief belief = Belief.of(lock)) {
                long believedPast = believedPastTheNextGrant(other, key, belief, lease);
                log().info(
                                "Clock at {}x with renewals failing (the validity's margin covers down to {}x): the holder of"
                                        + " '{}' believed it held the lock {} ms {} the next grant",
                                String.format("%.4f", rate),
                                String.format("%.4f", slowestCovered),
                                key,
                                Math.abs(believedPast) / 1_000_000,
                                believedPast > 0 ? "after" : "before");
                return new SlowRun(rate, slowestCovered, left, believedPast);
            }
        }
    }

    /**
     * Waits for another owner to be granted {@code key} and for the holder to stop believing; returns how long after
     * the grant (stamped once {@code lock} returned, so after the real grant) the holder last said it held the lock.
     */
    private long believedPastTheNextGrant(RemoteLocker other, String key, Belief belief, Duration extra)
            throws InterruptedException {
        Duration bound = shortLeaseTime().plus(expirySlack());
        RemoteLock next = Lockers.lock(
                other,
                key,
                bound,
                () -> "the holder's renewals failed, yet '" + key + "' was not free within " + DurationText.of(bound));
        long grantedBy = System.nanoTime();
        try {
            Duration ends = bound.plus(extra).plus(shortLeaseTime());
            assertTrue(
                    Deadlines.within(ends, belief::ended),
                    "the holder whose renewals failed still believed it held '" + key + "' " + DurationText.of(ends)
                            + " after");
            return belief.lastHeldNanos() - grantedBy;
        } finally {
            next.release();
        }
    }

    private static Logger log() {
        return LoggerFactory.getLogger(ClockSkewContract.class);
    }
}
