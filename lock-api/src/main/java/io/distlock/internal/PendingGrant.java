package io.distlock.internal;

import io.distlock.LockKind;
import io.distlock.spi.LeaseLossListener;
import io.distlock.spi.LockRequest;
import java.time.Duration;

/**
 * One try at a grant, before there is a handle: the {@link LockRequest} handed to the backend (with a fresh owner id),
 * whose loss listener this is. A loss the backend reports before the grant is handed over is remembered, and the grant
 * then refused ({@link #handOver} is false); a loss reported after it goes to the handle. Built for each try by {@link
 * Ask#next}, handed over by {@link HeldLocks#adopt}.
 */
final class PendingGrant implements LeaseLossListener {

    private final LockRequest request;
    private final boolean fixed;
    private DefaultRemoteLock handle; // guarded by this
    private boolean lostBeforeHandOver; // guarded by this
    private int releaseRequestsBeforeHandOver; // guarded by this

    /**
     * A request by {@code ownerId} for a grant of {@code kind} with {@code limit} on {@code key} with {@code
     * leaseTime}: a fixed lease (never renewed) if {@code fixed}.
     */
    PendingGrant(String key, String ownerId, Duration leaseTime, boolean fixed, LockKind kind, int limit) {
        this.request = new LockRequest(key, ownerId, leaseTime, this, kind, limit);
        this.fixed = fixed;
    }

    /** What the backend is asked for. */
    LockRequest request() {
        return request;
    }

    /** Whether the lock is held for a fixed lease, which nothing renews. */
    boolean fixed() {
        return fixed;
    }

    /** Gives the grant its handle, which hears of every later loss; false if the lease was lost before. */
    synchronized boolean handOver(DefaultRemoteLock lock) {
        if (lostBeforeHandOver) {
            return false;
        }
        handle = lock;
        for (; releaseRequestsBeforeHandOver > 0; releaseRequestsBeforeHandOver--) {
            lock.releaseRequested();
        }
        return true;
    }

    @Override
    public void leaseLost(String reason) {
        DefaultRemoteLock lock;
        synchronized (this) {
            if (handle == null) {
                lostBeforeHandOver = true;
                return;
            }
            lock = handle;
        }
        lock.markLost(reason);
    }

    /** Passed on to the handle's lease keeper; before the hand-over there is nothing at risk to tell. */
    @Override
    public void keepAliveFailing(boolean failing) {
        DefaultRemoteLock lock;
        synchronized (this) {
            lock = handle;
        }
        if (lock != null) {
            lock.keepAliveFailing(failing);
        }
    }

    /** Passed on to the handle; a request that comes before the hand-over is passed on at the hand-over. */
    @Override
    public void releaseRequested() {
        DefaultRemoteLock lock;
        synchronized (this) {
            lock = handle;
            if (lock == null) {
                releaseRequestsBeforeHandOver++;
                return;
            }
        }
        lock.releaseRequested();
    }
}
