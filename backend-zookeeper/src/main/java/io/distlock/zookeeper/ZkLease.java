package io.distlock.zookeeper;

import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.toolkit.LeaseLoss;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One granted lock: its node, the session holding it, and its fencing token (the node's {@code czxid}, the zxid of the
 * transaction that created it; zxids grow with every write to the ensemble, so later holders of a key always have
 * larger ones, even after the key's parent node was reaped and created again).
 */
final class ZkLease implements Lease {

    private final String key;
    private final String ownerId;
    private final String nodePath;
    private final long czxid;
    private final ZkSession session;
    private final LeaseLoss loss;
    private final LeaseLossListener lossListener;
    private final SessionWatch sessions;
    /**
     * The version of the node's data as last read, from its creation on: every change of the data since is a release
     * request ({@link ZooKeeperLockBackend#requestRelease}), reported once each ({@link #dataVersionRead}).
     */
    private final AtomicInteger dataVersion;
    /** The grant's lock-delay record ({@link ZkLockDelay}), deleted with the node by a release; null without. */
    private final String delayRecord;

    ZkLease(
            String key,
            String ownerId,
            String nodePath,
            long czxid,
            int dataVersion,
            String delayRecord,
            ZkSession session,
            LeaseLossListener lossListener,
            SessionWatch sessions) {
        this.key = key;
        this.ownerId = ownerId;
        this.nodePath = nodePath;
        this.czxid = czxid;
        this.session = session;
        this.loss = new LeaseLoss(lossListener);
        this.lossListener = lossListener;
        this.sessions = sessions;
        this.dataVersion = new AtomicInteger(dataVersion);
        this.delayRecord = delayRecord;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    @Override
    public OptionalLong fencingToken() {
        return OptionalLong.of(czxid);
    }

    /** See {@link ZkSession} for why this is a safe bound while connected, suspended, or after a freeze. */
    @Override
    public long validUntilNanos() {
        return loss.validUntilNanos(session.guaranteedUntil());
    }

    /** The session's connection is suspended ({@code true}) or back in the same session ({@code false}). */
    void keepAliveFailing(boolean failing) {
        loss.keepAliveFailing(failing);
    }

    /** Watches the lock's node for a deletion by anyone else (see {@link SessionWatch#watchOwned}). */
    @Override
    public void onStillHeld() {
        sessions.watchOwned(this);
    }

    /**
     * The node's data version, as an answer about the node just read it: each step past the version last read is one
     * release request (one write of the node's data by {@link ZkInspection#requestRelease}, or by Curator's {@code
     * Revoker}), told to the locker once, whichever answer reads it first. Ignored once the lease is lost or released.
     */
    void dataVersionRead(int version) {
        while (true) {
            int seen = dataVersion.get();
            if (version - seen <= 0) {
                return;
            }
            if (dataVersion.compareAndSet(seen, version)) {
                if (session.holds(this) && !isLost()) {
                    for (int i = seen; i != version; i++) {
                        lossListener.releaseRequested();
                    }
                }
                return;
            }
        }
    }

    /** The grant's lock-delay record, if its locker has a lock-delay. */
    Optional<String> delayRecord() {
        return Optional.ofNullable(delayRecord);
    }

    String nodePath() {
        return nodePath;
    }

    ZkSession session() {
        return session;
    }

    boolean isLost() {
        return loss.isLost() || session.isLost();
    }

    /** Marks the lease lost and tells the locker, once. */
    void lose(long nowNanos, String reason) {
        loss.lose(nowNanos, reason);
    }

    @Override
    public String toString() {
        return "ZkLease[" + key + ", " + nodePath + ", token=" + czxid + ", " + session + "]";
    }
}
