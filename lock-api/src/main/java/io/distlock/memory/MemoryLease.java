package io.distlock.memory;

import io.distlock.LockKind;
import io.distlock.Ticker;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import java.util.OptionalLong;

/** One grant in a {@link LockSpace}. Its validity is read and moved only under the space's mutex. */
final class MemoryLease implements Lease {

    private final String key;
    private final LockKind kind;
    private final int limit;
    private final String ownerId;
    private final long token;
    private final Ticker ticker;
    private final long grantedAtNanos;
    private volatile long validUntilNanos;

    MemoryLease(LockRequest request, long token, Ticker ticker, long grantedAtNanos) {
        this(
                request.key(),
                request.kind(),
                request.limit(),
                request.ownerId(),
                token,
                ticker,
                request.leaseTime().toNanos(),
                grantedAtNanos);
    }

    private MemoryLease(
            String key,
            LockKind kind,
            int limit,
            String ownerId,
            long token,
            Ticker ticker,
            long leaseNanos,
            long grantedAtNanos) {
        this.key = key;
        this.kind = kind;
        this.limit = limit;
        this.ownerId = ownerId;
        this.token = token;
        this.ticker = ticker;
        this.grantedAtNanos = grantedAtNanos;
        this.validUntilNanos = grantedAtNanos + leaseNanos;
    }

    @Override
    public String key() {
        return key;
    }

    /** What was granted. */
    LockKind kind() {
        return kind;
    }

    /** The limit it was asked with. */
    int limit() {
        return limit;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    @Override
    public OptionalLong fencingToken() {
        return OptionalLong.of(token);
    }

    @Override
    public long validUntilNanos() {
        return validUntilNanos;
    }

    /** When it was granted, on its ticker. */
    long grantedAtNanos() {
        return grantedAtNanos;
    }

    void renewFrom(long nowNanos, long leaseNanos) {
        validUntilNanos = nowNanos + leaseNanos;
    }

    /** The lease's ticker now. */
    long now() {
        return ticker.read();
    }

    boolean expired() {
        return ticker.read() - validUntilNanos >= 0;
    }

    @Override
    public String toString() {
        return "MemoryLease[" + key + ", owner=" + ownerId + ", token=" + token + "]";
    }
}
