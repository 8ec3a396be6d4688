package io.distlock.redis;

import io.distlock.spi.Lease;
import java.util.OptionalLong;

/**
 * One Redlock acquisition: the key, the random value set on the masters, and the validity (seed 002 step 3) as of
 * the grant or the last renewal. Redlock has no fencing token (see the provider's documentation).
 */
final class RedisLease implements Lease {

    private final String key;
    private final String ownerId;
    private final String redisKey;
    private final String value;
    private volatile long validUntilNanos;
    private volatile boolean waitedFor;

    RedisLease(String key, String ownerId, String redisKey, String value, long validUntilNanos) {
        this.key = key;
        this.ownerId = ownerId;
        this.redisKey = redisKey;
        this.value = value;
        this.validUntilNanos = validUntilNanos;
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

    /** What a release message names this acquisition by: the start of its value (see {@code release.lua}). */
    String releaseId() {
        return value.substring(0, ReleaseMessages.RELEASE_ID_LENGTH);
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

    void renewed(long validUntil) {
        this.validUntilNanos = validUntil;
    }

    @Override
    public String toString() {
        return "RedisLease[" + key + ", owner=" + ownerId + "]";
    }
}
