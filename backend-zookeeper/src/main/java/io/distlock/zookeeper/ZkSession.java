package io.distlock.zookeeper;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One ZooKeeper session of this client, and the locks held in it: the session is their lease.
 *
 * <h2>How long the session is guaranteed</h2>
 * The leader expires a session when it has heard nothing of it for the negotiated session timeout {@code T}, counted
 * on the leader from the last time it heard of the session. A server that answers this client's request sent at
 * ticker reading {@code s} heard of the session at or after {@code s}; but if that server is a follower, the leader
 * hears of it only when it next pings the follower (every half tick), and never if the follower dies first. So a send
 * counts only once it is <em>confirmed</em>: the same connection (no disconnection in between) later answered a {@code
 * sync}, which the follower passes through the leader, sent at least half a tick ({@code reportLag}) after the first
 * answer came. The follower was then alive and linked to the leader for a whole ping period after it heard of the
 * session, so the leader has heard of it too. The session is guaranteed until {@code (latest confirmed s) + T -
 * drift}, where {@code drift = T/100 + 2 ms} allows for the two clocks running at slightly different rates.
 *
 * <p>The session's creation is confirmed by itself: the leader creates it, after the client's connection attempt
 * began, so a reading taken before that attempt is a confirmed send (the session's floor). Heartbeats (see {@link
 * SessionWatch}) are {@code sync}s every sixth of {@code T}, so while the connection is up the latest confirmed send
 * is at most about {@code T/6 + reportLag} old plus a round trip.
 *
 * <p>While the connection is {@code SUSPENDED} nothing is answered, so the guarantee stops moving: it stays frozen,
 * and a held lock's {@link io.distlock.RemoteLock#isHeld()} turns false before the leader can have expired the session
 * and handed the lock to someone else, even if Curator has not yet reported {@code LOST}. This also holds after this
 * process was frozen (a GC pause, {@code SIGSTOP}): nothing answered during the freeze counts. If the connection
 * returns in time with the same session, answers move the guarantee on and the locks are kept.
 */
final class ZkSession {

    /** Marks "none" in {@link #confirmedSendNanos}. */
    static final long NONE = Long.MIN_VALUE;

    private final long id;
    private final long seenNanos;
    private final long timeoutNanos;
    private final long guaranteedNanos;
    private final long reportLagNanos;
    private final Set<ZkLease> leases = ConcurrentHashMap.newKeySet();
    /** Answered syncs of {@link #connection} not yet confirmed, oldest first: {send, answer} readings. */
    private final Deque<long[]> unconfirmed = new ArrayDeque<>(); // guarded by this

    private long connection = Long.MIN_VALUE; // guarded by this
    private volatile long confirmedSendNanos;
    private volatile boolean lost;
    private volatile long lostAtNanos;

    /**
     * @param reportLagNanos the longest a follower takes to tell the leader of a session it heard from: half the
     *     ensemble's tick
     * @param floorNanos a reading taken before the connection attempt that created the session, or {@link #NONE}
     * @param seenNanos the reading when this client first saw the session
     */
    ZkSession(long id, long timeoutNanos, long reportLagNanos, long floorNanos, long seenNanos) {
        this.id = id;
        this.seenNanos = seenNanos;
        this.timeoutNanos = timeoutNanos;
        this.guaranteedNanos = timeoutNanos - timeoutNanos / 100 - 2_000_000L;
        this.reportLagNanos = reportLagNanos;
        this.confirmedSendNanos = floorNanos;
    }

    long id() {
        return id;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /**
     * The server answered, at reading {@code answeredNanos}, a {@code sync} of this session sent at {@code sentNanos}
     * on the {@code connection}-th connection (see {@link SessionWatch}): the answer confirms every earlier answered
     * sync of that connection that came back at least {@code reportLag} before this one was sent.
     */
    synchronized void answered(long sentNanos, long answeredNanos, long connection) {
        if (connection != this.connection) {
            unconfirmed.clear(); // another connection, maybe another server: what the last one heard proves nothing
            this.connection = connection;
        }
        long confirmed = confirmedSendNanos;
        while (!unconfirmed.isEmpty() && unconfirmed.peekFirst()[1] + reportLagNanos <= sentNanos) {
            confirmed = Math.max(confirmed, unconfirmed.pollFirst()[0]);
        }
        confirmedSendNanos = confirmed;
        unconfirmed.addLast(new long[] {sentNanos, answeredNanos});
    }

    /**
     * Confirms a send directly: {@code floorNanos} was read before the connection attempt that created the session (the
     * leader created it after that), learnt after the session was first seen.
     */
    void confirmFloor(long floorNanos) {
        synchronized (this) {
            confirmedSendNanos = Math.max(confirmedSendNanos, floorNanos);
        }
    }

    /** Whether some send of the session is confirmed, so that {@link #guaranteedUntil} is a real bound. */
    boolean isConfirmed() {
        return confirmedSendNanos != NONE;
    }

    /** Whether a send made at or after reading {@code nanos} is confirmed. */
    boolean isConfirmedSince(long nanos) {
        long confirmed = confirmedSendNanos;
        return confirmed != NONE && confirmed - nanos >= 0;
    }

    /**
     * Until when the session is guaranteed alive (see the class comment); a reading in the past once the session is
     * lost, or while no send is confirmed yet (the reading when the session was first seen).
     */
    long guaranteedUntil() {
        if (lost) {
            return lostAtNanos;
        }
        long confirmed = confirmedSendNanos;
        return confirmed == NONE ? seenNanos : confirmed + guaranteedNanos;
    }

    boolean isLost() {
        return lost;
    }

    /** Adds a lease held in this session; false if the session is already lost (the lease is then lost too). */
    boolean adopt(ZkLease lease) {
        leases.add(lease);
        return !lost;
    }

    /** Whether {@code lease} is held in this session and not yet released or lost. */
    boolean holds(ZkLease lease) {
        return leases.contains(lease);
    }

    void forget(ZkLease lease) {
        leases.remove(lease);
    }

    List<ZkLease> leases() {
        return List.copyOf(leases);
    }

    /** Marks the session lost at {@code nowNanos} and tells every lease held in it, once. */
    void markLost(long nowNanos, String reason) {
        synchronized (this) {
            if (lost) {
                return;
            }
            lostAtNanos = nowNanos;
            lost = true;
        }
        for (ZkLease lease : leases()) {
            lease.lose(nowNanos, reason);
        }
        leases.clear();
    }

    @Override
    public String toString() {
        return "session 0x" + Long.toHexString(id);
    }
}
