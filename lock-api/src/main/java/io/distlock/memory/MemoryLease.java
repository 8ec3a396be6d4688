package io.distlock.memory;

import io.distlock.LockKind;
import io.distlock.Ticker;
import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
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
    /** How long the entry outlives its validity if it is not released: the locker's lock-delay. */
    private final long delayNanos;

    private final LeaseLossListener listener;
    private volatile long validUntilNanos;

    MemoryLease(LockRequest request, long token, Ticker ticker, long grantedAtNanos, long delayNanos) {
        this(
                request.key(),
                request.kind(),
                request.limit(),
                request.ownerId(),
                token,
                ticker,
                request.leaseTime().toNanos(),
                grantedAtNanos,
                delayNanos,
                request.lossListener());
    }

    private MemoryLease(
            String key,
            LockKind kind,
            int limit,
            String ownerId,
            long token,
            Ticker ticker,
            long leaseNanos,
            long grantedAtNanos,
            long delayNanos,
            LeaseLossListener listener) {
        this.key = key;
        this.kind = kind;
        this.limit = limit;
        this.ownerId = ownerId;
        this.token = token;
        this.ticker = ticker;
        this.grantedAtNanos = grantedAtNanos;
        this.delayNanos = delayNanos;
        this.listener = listener;
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

    /**
     * Whether the entry is gone from the space: its validity and the lock-delay after it have passed (a store drops an
     * entry whose time to live, lease plus delay, ran out).
     */
    boolean expired() {
        return ticker.read() - entryEndsNanos() >= 0;
    }

    /** When the entry leaves the space unless released: its validity, plus the lock-delay. */
    long entryEndsNanos() {
        return validUntilNanos + delayNanos;
    }

    /** Tells the holder's locker that somebody asked it to let go. */
    void requestRelease() {
        listener.releaseRequested();
    }

    @Override
    public String toString() {
        return "MemoryLease[" + key + ", owner=" + ownerId + ", token=" + token + "]";
    }
}
