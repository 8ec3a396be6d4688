package io.distlock.zookeeper;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One ZooKeeper session of this client, and the locks held in it: the session is their lease.
 *
 * <h2>How long the session is guaranteed</h2>
 * The server expires a session when it has heard nothing from the client for the negotiated session timeout {@code
 * T}. So when the server answered a request this client sent at ticker reading {@code s}, the session lives at least
 * until {@code s + T} on the server's clock. The session is guaranteed until {@code (latest such s) + T - drift},
 * where {@code drift = T/100 + 2 ms} allows for the two clocks running at slightly different rates. A heartbeat
 * (see {@link SessionWatch}) keeps {@code s} at most a third of {@code T} old while the connection is up.
 *
 * <p>While the connection is {@code SUSPENDED} nothing is answered, so the guarantee stops moving: it stays frozen at
 * {@code s + T - drift}, at most {@code T} after the suspension began (less the age of the last answer), and a held
 * lock's {@link io.distlock.RemoteLock#isHeld()} turns false then, before the server can have expired the session
 * and handed the lock to someone else, even if Curator has not yet reported {@code LOST}. This also holds after this
 * process was frozen (a GC pause, {@code SIGSTOP}): nothing answered during the freeze counts. If the connection
 * returns in time with the same session, answers move the guarantee on and the locks are kept.
 */
final class ZkSession {

    /** Marks "no answer yet" in {@link #lastAnsweredSendNanos}. */
    private static final long NONE = Long.MIN_VALUE;

    private final long id;
    private final long timeoutNanos;
    private final long guaranteedNanos;
    private final AtomicLong lastAnsweredSendNanos = new AtomicLong(NONE);
    private final Set<ZkLease> leases = ConcurrentHashMap.newKeySet();
    private volatile boolean lost;
    private volatile long lostAtNanos;

    ZkSession(long id, long timeoutNanos) {
        this.id = id;
        this.timeoutNanos = timeoutNanos;
        this.guaranteedNanos = timeoutNanos - timeoutNanos / 100 - 2_000_000L;
    }

    long id() {
        return id;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /** The server answered a request of this session sent at ticker reading {@code sentNanos}. */
    void answered(long sentNanos) {
        lastAnsweredSendNanos.accumulateAndGet(sentNanos, Math::max);
    }

    /**
     * Until when the session is guaranteed alive, given that the server also answered a request sent at {@code
     * floorNanos} (the creation of a lock node); a reading in the past once the session is lost.
     */
    long guaranteedUntil(long floorNanos) {
        if (lost) {
            return lostAtNanos;
        }
        return Math.max(floorNanos, lastAnsweredSendNanos.get()) + guaranteedNanos;
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
