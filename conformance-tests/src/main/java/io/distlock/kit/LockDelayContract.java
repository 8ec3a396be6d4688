package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockConfigurationException;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The lock-delay ({@link io.distlock.RemoteLockerBuilder#lockDelay}, {@link Capabilities.Operation#LOCK_DELAY}): a
 * key whose holder was killed stays taken for the delay after its lease would have freed it, while a released key is
 * free at once; a backend that cannot keep a delay refuses it when the locker is built.
 */
public interface LockDelayContract extends LockerFixture {

    /** The delay the kit asks for: two short leases, long enough to tell apart from a lease's end. */
    private Duration lockDelay() {
        return shortLeaseTime().multipliedBy(2);
    }

    /**
     * A holder killed with {@code SIGKILL} in another process, whose locker has a lock-delay, leaves its key taken
     * for the delay after its lease: another locker is granted it no earlier than the delay plus what was left of the
     * lease (at least half the lease on a {@link LeaseModel#RENEWED_TTL} backend, which renews every third of it; the
     * session's end on a {@link LeaseModel#SESSION} one, not less than the delay), and within the bound for a crashed
     * holder plus the delay.
     */
    @Test
    @Requires({Need.LOCK_DELAY, Need.OTHER_PROCESSES})
    default void lockDelay_killedHolder_keyIsGrantedNoEarlierThanTheLeasePlusTheDelay() throws Exception {
        String key = TestKeys.unique("lock-delay-killed");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        Duration delay = lockDelay();
        String uri = multiProcessSupport().workerUri().orElseThrow(); // checked by @Requires(Need.OTHER_PROCESSES)
        String withDelay = uri + (uri.contains("?") ? "&" : "?") + "lockDelay=" + delay.toMillis() + "ms";
        try (Workers workers = Workers.create(withDelay, shortLeaseTime(), maxWait());
                RemoteLocker kit = openLocker(leaseTime())) {
            Worker holder =
                    workers.start("hold", key, 1, 1, Duration.ofMinutes(10).toMillis());
            Workers.awaitLine(holder, "ACQUIRED", Workers.startup().plus(maxWait()));
            holder.kill();
            long killed = System.nanoTime();
            Duration bound = Lockers.freedWithin(this, model).plus(delay);
            Duration took;
            try (RemoteLock next = kit.lock(key, bound)) {
                took = Duration.ofNanos(System.nanoTime() - killed);
                assertTrue(next.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the key of a killed holder with a lock-delay of " + DurationText.of(delay)
                                + " was not free within " + DurationText.of(bound) + " (" + model + ")",
                        e);
            }
            Duration earliest = model == LeaseModel.RENEWED_TTL
                    ? delay.plus(shortLeaseTime().dividedBy(2))
                    : delay;
            LoggerFactory.getLogger(LockDelayContract.class)
                    .info(
                            "The key of a holder killed with a lock-delay of {} and a lease of {} was granted {} ms"
                                    + " after the kill (earliest allowed {} ms, bound {} ms)",
                            DurationText.of(delay),
                            DurationText.of(shortLeaseTime()),
                            took.toMillis(),
                            earliest.toMillis(),
                            bound.toMillis());
            assertTrue(
                    took.compareTo(earliest) >= 0,
                    "the key of a holder killed with a lock-delay of " + DurationText.of(delay) + " was granted "
                            + took.toMillis() + " ms after the kill, before the delay plus the lease left ("
                            + earliest.toMillis() + " ms)");
            assertTrue(
                    took.compareTo(bound) <= 0,
                    "granted " + took.toMillis() + " ms after the kill; bound " + bound.toMillis() + " ms");
        }
    }

    /**
     * A key released by a locker with a long lock-delay is free at once: another locker takes it with {@code
     * tryLock}, without waiting. A held key is not, and the delay leaves the holder's own validity at its lease.
     */
    @Test
    @Requires(Need.LOCK_DELAY)
    default void lockDelay_releasedKey_isFreeAtOnce() throws Exception {
        String key = TestKeys.unique("lock-delay-released");
        Duration delay = maxWait();
        try (RemoteLocker holder =
                        lockerBuilder().leaseTime(leaseTime()).lockDelay(delay).build();
                RemoteLocker other = openLocker(leaseTime())) {
            for (int round = 0; round < 3; round++) {
                RemoteLock lock = holder.lock(key, maxWait());
                Optional<RemoteLock> whileHeld = other.tryLock(key);
                whileHeld.ifPresent(RemoteLock::close);
                assertFalse(whileHeld.isPresent(), "another locker took '" + key + "' while it was held");
                Duration left = Duration.between(java.time.Instant.now(), lock.validUntil());
                assertTrue(
                        left.compareTo(leaseTime().plus(Duration.ofSeconds(1))) <= 0,
                        "the holder's validity (" + left.toMillis() + " ms left) counts the lock-delay, not only"
                                + " its lease of " + DurationText.of(leaseTime()));
                lock.release();
                Optional<RemoteLock> afterRelease = other.tryLock(key);
                assertTrue(
                        afterRelease.isPresent(),
                        "round " + round + ": a key released by a locker with a lock-delay of " + DurationText.of(delay)
                                + " was not free at once");
                afterRelease.get().release();
            }
        }
    }

    /**
     * A backend that does not declare {@link Capabilities.Operation#LOCK_DELAY} refuses a locker with a lock-delay
     * when it is built, naming the option; one that declares it builds it. Zero is no delay, accepted everywhere.
     */
    @Test
    default void lockDelay_isBuiltOnlyWhereTheBackendKeepsIt() {
        boolean offered = Lockers.capabilities(this).offers(Capabilities.Operation.LOCK_DELAY);
        try (RemoteLocker none = lockerBuilder().lockDelay(Duration.ZERO).build()) {
            assertTrue(none.capabilities() != null);
        }
        if (offered) {
            try (RemoteLocker delayed =
                    lockerBuilder().lockDelay(Duration.ofSeconds(1)).build()) {
                assertTrue(delayed.capabilities().offers(Capabilities.Operation.LOCK_DELAY));
            }
        } else {
            LockConfigurationException e = assertThrows(LockConfigurationException.class, () -> lockerBuilder()
                    .lockDelay(Duration.ofSeconds(1))
                    .build()
                    .close());
            assertTrue(e.getMessage().contains("lockDelay"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> lockerBuilder().lockDelay(Duration.ofSeconds(-1)));
    }
}
