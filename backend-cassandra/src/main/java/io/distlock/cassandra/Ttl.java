package io.distlock.cassandra;

import java.time.Duration;

/**
 * Cassandra TTLs count whole seconds, and a cell written with TTL {@code n} at second {@code s.9} expires at second
 * {@code s + n}: it may live as little as {@code n - 1} seconds. A lease of {@code d} is therefore written with TTL
 * {@code ceil(d) + 1}, which lives at least {@code d}; the validity reported to the locker is {@code d} from before
 * the write, never more (less the clock-drift allowance: {@link LeaseValidity}). A sub-second lease gets a 2 s TTL: its holder is told it may rely on {@code d}, while a
 * crashed holder's cells stay up to 2 s.
 */
final class Ttl {

    /** Cassandra refuses TTLs over 20 years. */
    static final long MAX_TTL_SECONDS = 630_720_000L;

    private Ttl() {}

    /** The TTL in seconds that keeps a cell at least {@code leaseTime}. */
    static int seconds(Duration leaseTime) {
        long millis = leaseTime.toMillis();
        long whole = (millis + 999) / 1000;
        return (int) Math.min(MAX_TTL_SECONDS, Math.max(1, whole) + 1);
    }

    /**
     * The TTL in seconds of a grant's cells: they keep the key at least {@code leaseTime} plus the locker's {@code
     * lockDelay} (zero for none) unless deleted, so that a grant that ends without a release (its holder crashed,
     * froze or was cut off) leaves the key taken the delay longer than the lease; a release deletes them at once.
     */
    static int held(Duration leaseTime, Duration lockDelay) {
        return seconds(leaseTime.plus(lockDelay));
    }
}
