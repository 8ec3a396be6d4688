package io.distlock.cassandra;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.DurationText;
import java.time.Duration;

/**
 * How long a holder may count on its cells after writing them. A cell written with TTL {@code
 * ceil(d) + 1} s ({@link Ttl}) expires at the clock of the node that coordinated the write plus the TTL, and is judged
 * expired by the clock of the node that coordinates a later read: a reading node whose clock runs {@code x} ahead
 * sees it gone {@code x} early. So the validity is the lease time, from before the write, less a clock-drift
 * allowance ({@value CassandraLockOptions#CLOCK_DRIFT}), as Redlock subtracts its drift.
 */
final class LeaseValidity {

    /** The allowance when none is given, unless a tenth of the lease is less. */
    static final Duration DEFAULT_DRIFT = Duration.ofMillis(100);

    private final Duration drift; // null: the default

    private LeaseValidity(Duration drift) {
        this.drift = drift;
    }

    /** The default allowance: {@link #DEFAULT_DRIFT}, at most a tenth of the lease. */
    static LeaseValidity byDefault() {
        return new LeaseValidity(null);
    }

    /**
     * An explicit allowance.
     *
     * @throws LockConfigurationException if it is negative or not shorter than half of {@code leaseTime} (the option
     *     itself is checked to be positive)
     */
    static LeaseValidity explicit(Duration drift, Duration leaseTime) {
        if (drift.isNegative() || drift.multipliedBy(2).compareTo(leaseTime) >= 0) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.CLOCK_DRIFT + "' ("
                    + DurationText.of(drift) + ") must be shorter than half the lease (" + DurationText.of(leaseTime)
                    + ")");
        }
        return new LeaseValidity(drift);
    }

    /** The allowance for a lease of {@code leaseTime} (never more than half of it). */
    Duration drift(Duration leaseTime) {
        Duration half = leaseTime.dividedBy(2);
        Duration d = drift != null ? drift : min(DEFAULT_DRIFT, leaseTime.dividedBy(10));
        return min(d, half);
    }

    /** Until when (a ticker reading) a holder may count on cells written for {@code leaseTime} at {@code sentNanos}. */
    long until(long sentNanos, Duration leaseTime) {
        return sentNanos + leaseTime.toNanos() - drift(leaseTime).toNanos();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public String toString() {
        return drift == null ? "default drift allowance" : "drift allowance " + DurationText.of(drift);
    }
}
