package io.distlock.etcd;

import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.toolkit.LeaseLoss;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One granted lock: the etcd key that holds it, that key's create revision (the fencing token, and what release and
 * renewal compare against, so a stale handle can never touch a newer holder's key), and the session whose lease keeps
 * it alive.
 */
final class EtcdLease implements Lease {

    private final String key;
    private final String ownerId;
    /** What the key holds: the owner id, or an election's candidate identity ({@link FairQueue#value()}). */
    private final String value;

    private final String etcdKey;
    private final String claimedName;
    /** The holders' record of a cas read-write lock or semaphore ({@link CasRecord}), or null. */
    private final String recordKey;

    private final long createRevision;
    private final long confirmedAt;
    private final EtcdSession session;
    private final LeaseLoss loss;
    private final LeaseLossListener listener;
    /**
     * The highest version of the key seen since the grant: 1, the grant's own put, then one more for each release
     * request ({@link #keyVersionSeen}).
     */
    private final AtomicLong versionSeen = new AtomicLong(1);
    /** For the watch on the key (see {@link OwnKeyWatch}): its requests, each bounded by {@code operationTimeout}. */
    private final EtcdCalls calls;

    private final Duration operationTimeout;
    private final AtomicBoolean releasing = new AtomicBoolean();
    /** Stops the watch on the key (see {@link OwnKeyWatch}); null: none. */
    private final AtomicReference<Runnable> ownKeyWatch = new AtomicReference<>();

    EtcdLease(
            String key,
            String ownerId,
            String value,
            String etcdKey,
            String claimedName,
            String recordKey,
            long createRevision,
            long confirmedAt,
            EtcdSession session,
            LeaseLossListener lossListener,
            EtcdCalls calls,
            Duration operationTimeout) {
        this.key = key;
        this.ownerId = ownerId;
        this.value = value;
        this.etcdKey = etcdKey;
        this.claimedName = claimedName;
        this.recordKey = recordKey;
        this.createRevision = createRevision;
        this.confirmedAt = confirmedAt;
        this.session = session;
        this.loss = new LeaseLoss(lossListener);
        this.listener = lossListener;
        this.calls = calls;
        this.operationTimeout = operationTimeout;
    }

    /** Watches the key for a deletion by anyone else (see {@link OwnKeyWatch}). */
    @Override
    public void onStillHeld() {
        OwnKeyWatch.start(calls, operationTimeout, this);
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    /** The create revision of the owner key: etcd's revision counter, so strictly increasing across the cluster. */
    @Override
    public OptionalLong fencingToken() {
        return OptionalLong.of(createRevision);
    }

    /**
     * The key was seen at {@code version} (by the watch on it, or a read): every put on it after the grant's is a
     * release request ({@link EtcdInspection#requestRelease}), since nothing else puts a granted key; each version above
     * the highest seen so far is told to the locker once, however often and in whatever order it is seen.
     */
    void keyVersionSeen(long version) {
        long before = versionSeen.getAndAccumulate(version, Math::max);
        for (long v = before; v < version && !releasing.get() && !isLost(); v++) {
            listener.releaseRequested();
        }
    }

    /** The session's keep-alives go unanswered ({@code true}) or are answered again ({@code false}). */
    void keepAliveFailing(boolean failing) {
        loss.keepAliveFailing(failing);
    }

    /** The session's validity (see {@link EtcdSession}); frozen at the moment of loss once lost. */
    @Override
    public long validUntilNanos() {
        return loss.validUntilNanos(session.validUntilNanos());
    }

    /** What the key holds, which a deletion in the background compares. */
    String value() {
        return value;
    }

    String etcdKey() {
        return etcdKey;
    }

    /** The name this lease's session claimed (fair mode), or null. */
    String claimedName() {
        return claimedName;
    }

    /** The holders' record this lease's key belongs to (cas mode, a reader, writer or permit), or null. */
    String recordKey() {
        return recordKey;
    }

    long createRevision() {
        return createRevision;
    }

    /** A store revision at which the key was known to be ours (the grant's answer): the own-key watch starts there. */
    long confirmedAt() {
        return confirmedAt;
    }

    EtcdSession session() {
        return session;
    }

    boolean isLost() {
        return loss.isLost() || session.isLost();
    }

    /** Marks the lease lost and tells the locker, once; unless its release has begun (then it is ours to end). */
    void lose(long nowNanos, String reason) {
        stopWatchingOwnKey();
        if (!loss.isLost() && !releasing.get()) {
            loss.lose(Math.min(nowNanos, session.validUntilNanos()), reason);
        }
    }

    /**
     * Keeps what stops the watch on this lease's key (see {@link OwnKeyWatch}) until the lease is released or lost.
     */
    void watchingOwnKey(Runnable stop) {
        ownKeyWatch.set(stop);
        if (releasing.get() || isLost()) {
            stopWatchingOwnKey();
        }
    }

    /** The release begins: our own delete is no loss; the watch on the key ends. */
    void releasing() {
        releasing.set(true);
        stopWatchingOwnKey();
    }

    boolean isReleasing() {
        return releasing.get();
    }

    private void stopWatchingOwnKey() {
        Runnable stop = ownKeyWatch.getAndSet(null);
        if (stop != null) {
            stop.run();
        }
    }

    @Override
    public String toString() {
        return "EtcdLease[" + key + " at " + etcdKey + ", token=" + createRevision + ", " + session + "]";
    }
}
