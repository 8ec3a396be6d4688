package io.distlock.cassandra;

import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.toolkit.HeardRequests;
import java.time.Duration;
import java.util.OptionalLong;

/**
 * One grant: the key, the partition and entry of its space ({@link SharedEntries}), the owner id, the queue ticket and the owner cell's slot (absent for the legacy algorithm), the fencing token when
 * fencing is on, the lease time its cells' TTL is rewritten for, the validity of the last grant or renewal, and the
 * release requests it has heard.
 */
final class CassandraLease implements Lease {

    private final String key;
    private final String partition;
    private final String entry;
    private final boolean exclusive;
    private final String ownerId;
    private final String ticket;
    private final String slot;
    private final Duration leaseTime;
    private final OptionalLong fencingToken;
    private final RewriteFence fence;
    private final HeardRequests heard;
    private volatile long validUntilNanos;

    CassandraLease(
            String key,
            String ownerId,
            String ticket,
            String slot,
            Duration leaseTime,
            OptionalLong fencingToken,
            long validUntilNanos,
            LeaseLossListener listener) {
        this(key, key, ownerId, true, ownerId, ticket, slot, leaseTime, fencingToken, validUntilNanos, listener);
    }

    /** A grant in the space whose partition of the key is {@code partition}, its owner cell holding {@code entry}. */
    CassandraLease(
            String key,
            String partition,
            String entry,
            boolean exclusive,
            String ownerId,
            String ticket,
            String slot,
            Duration leaseTime,
            OptionalLong fencingToken,
            long validUntilNanos,
            LeaseLossListener listener) {
        this(
                key,
                partition,
                entry,
                exclusive,
                ownerId,
                ticket,
                slot,
                leaseTime,
                fencingToken,
                validUntilNanos,
                new RewriteFence(),
                new HeardRequests(listener));
    }

    private CassandraLease(
            String key,
            String partition,
            String entry,
            boolean exclusive,
            String ownerId,
            String ticket,
            String slot,
            Duration leaseTime,
            OptionalLong fencingToken,
            long validUntilNanos,
            RewriteFence fence,
            HeardRequests heard) {
        this.key = key;
        this.partition = partition;
        this.entry = entry;
        this.exclusive = exclusive;
        this.ownerId = ownerId;
        this.ticket = ticket;
        this.slot = slot;
        this.leaseTime = leaseTime;
        this.fencingToken = fencingToken;
        this.validUntilNanos = validUntilNanos;
        this.fence = fence;
        this.heard = heard;
    }

    /** The same lease with its fencing token. */
    CassandraLease withFencingToken(long token) {
        return new CassandraLease(
                key,
                partition,
                entry,
                exclusive,
                ownerId,
                ticket,
                slot,
                leaseTime,
                OptionalLong.of(token),
                validUntilNanos,
                fence,
                heard);
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    /** The partition of the key in the grant's space: the key itself for a lock. */
    String partition() {
        return partition;
    }

    /** The owner cell's value: the owner id, tagged with the kind outside the lock's space. */
    String entry() {
        return entry;
    }

    /** Whether the grant excludes every other in its space (a lock, a writer). */
    boolean exclusive() {
        return exclusive;
    }

    /** The queue cell's clustering value; null for the legacy algorithm. */
    String ticket() {
        return ticket;
    }

    /** The owner cell's clustering value (see {@link OwnerSlots}); null for the legacy algorithm. */
    String slot() {
        return slot;
    }

    /** Orders this lease's renewal rewrites before its release (shared with its copy that carries the token). */
    RewriteFence fence() {
        return fence;
    }

    /** The release requests this grant has heard (shared with its copy that carries the token). */
    HeardRequests heard() {
        return heard;
    }

    Duration leaseTime() {
        return leaseTime;
    }

    @Override
    public OptionalLong fencingToken() {
        return fencingToken;
    }

    @Override
    public long validUntilNanos() {
        return validUntilNanos;
    }

    void extendTo(long validUntil) {
        validUntilNanos = validUntil;
    }

    @Override
    public String toString() {
        return "CassandraLease[" + key + ", " + ownerId + (ticket == null ? "" : ", ticket=" + ticket)
                + fencingToken.stream()
                        .mapToObj(t -> ", token=" + t)
                        .findFirst()
                        .orElse("") + "]";
    }
}
