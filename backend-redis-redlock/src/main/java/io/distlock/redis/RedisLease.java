package io.distlock.redis;

import io.distlock.LockKind;
import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.toolkit.HeardRequests;
import java.util.List;
import java.util.OptionalLong;

/**
 * One Redlock acquisition: the key, the random value set on the masters, and the validity (seed 002 step 3) as of
 * the grant or the last renewal. Redlock has no fencing token (see the provider's documentation). A read or write
 * share or a permit ({@link #kind()} other than {@link LockKind#LOCK}) is a holder in its space's set ({@link
 * #spaceKey()}), kept by as many masters as its {@link #quorum()}. Its renewals read the release requests to it
 * ({@link #heard}), which the lease passes on to its locker once each.
 */
final class RedisLease implements Lease {

    private final String key;
    private final String ownerId;
    private final String redisKey;
    private final String value;
    private final LockKind kind;
    private final byte[] spaceKey;
    private final int quorum;
    /** The release requests heard so far, on any master. */
    private final HeardRequests requestsHeard;

    private volatile long validUntilNanos;
    private volatile boolean waitedFor;

    /** A lock's lease: {@code value} set at {@code redisKey}, {@code listener} its locker's. */
    RedisLease(
            String key,
            String ownerId,
            String redisKey,
            String value,
            long validUntilNanos,
            LeaseLossListener listener) {
        this(key, ownerId, redisKey, value, validUntilNanos, LockKind.LOCK, null, 0, listener);
    }

    /**
     * A lease of {@code kind}; for a shared space, {@code redisKey} is the space's label ({@link
     * RedlockSettings#spaceLabel}), {@code value} the holder in its set and {@code spaceKey} the set's key.
     */
    RedisLease(
            String key,
            String ownerId,
            String redisKey,
            String value,
            long validUntilNanos,
            LockKind kind,
            byte[] spaceKey,
            int quorum,
            LeaseLossListener listener) {
        this.key = key;
        this.ownerId = ownerId;
        this.redisKey = redisKey;
        this.value = value;
        this.validUntilNanos = validUntilNanos;
        this.kind = kind;
        this.spaceKey = spaceKey;
        this.quorum = quorum;
        this.requestsHeard = new HeardRequests(listener);
    }

    /** What this lease holds. */
    LockKind kind() {
        return kind;
    }

    /** The key of the set that holds this share or permit; null for a lock. */
    byte[] spaceKey() {
        return spaceKey;
    }

    /** How many masters must keep a share or permit for it to be held; 0 for a lock (the majority). */
    int quorum() {
        return quorum;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    /** The key as stored in Redis (with the prefix). */
    String redisKey() {
        return redisKey;
    }

    /** The value set on the masters: 20 random bytes (see {@link Redlock#newValue}), then the owner id for whoever reads the store. */
    String value() {
        return value;
    }

    /**
     * What a release message names this acquisition by: the start of its random value (see {@code release.lua};
     * a holder in a shared space starts with its tag, which is skipped).
     */
    String releaseId() {
        int from = kind == LockKind.LOCK ? 0 : value.indexOf(':') + 1;
        return value.substring(from, from + ReleaseMessages.RELEASE_ID_LENGTH);
    }

    @Override
    public OptionalLong fencingToken() {
        return OptionalLong.empty();
    }

    @Override
    public long validUntilNanos() {
        return validUntilNanos;
    }

    /** Whether its acquisition found the key held before it was granted: the key is contended. */
    boolean waitedFor() {
        return waitedFor;
    }

    void markWaitedFor() {
        this.waitedFor = true;
    }

    /**
     * A renewal on one master read release requests to this lease ({@code ids}, separated by spaces: see {@code
     * holders.lua}): tells the locker once for each request not heard before, on another master or at an earlier
     * renewal.
     */
    void heard(String ids) {
        requestsHeard.read(List.of(ids.trim().split(" +")));
    }

    void renewed(long validUntil) {
        this.validUntilNanos = validUntil;
    }

    @Override
    public String toString() {
        return "RedisLease[" + (kind == LockKind.LOCK ? "" : kind.label() + " ") + key + ", owner=" + ownerId + "]";
    }
}
