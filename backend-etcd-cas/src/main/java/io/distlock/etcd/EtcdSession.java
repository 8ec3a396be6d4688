package io.distlock.etcd;

import io.distlock.spi.Deadline;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One etcd lease kept alive by the backend, like etcd's {@code concurrency.Session}: every lock key the backend puts
 * is attached to a session's lease, so the keys of a crashed or cut-off client vanish one TTL after its last
 * keep-alive.
 *
 * <p>The backend sends a keep-alive every third of the TTL, reading the ticker <em>before</em> sending it; an answer
 * with a positive TTL moves {@link #validUntilNanos()} to that reading plus the TTL, less a drift allowance of TTL/100
 * + 2 ms. The leader counts the TTL from when it received the request, which is later, on its own monotonic clock, and
 * a new leader extends every lease; what is left is the two clocks running at different rates (NTP slews a monotonic
 * clock by up to 500 ppm, a VM's may be worse), which the allowance covers with a margin, as ZooKeeper's and Redlock's
 * do. So the bound never overstates what etcd guarantees. The session is lost when etcd says the lease is gone, or when no keep-alive has succeeded by
 * the end of the validity; its locks are then reported lost and the session is replaced for later acquisitions.
 *
 * <p>With a lock-delay ({@link io.distlock.spi.BackendConfig#lockDelay()}, whole seconds, rounded up) the lease is
 * granted for the lock's TTL plus the delay, and every keep-alive renews it to that: etcd keeps the keys one delay
 * longer after the last keep-alive. The validity stays the TTL alone: an answer's TTL less the delay, from its send, as
 * above, and the keep-alives go every third of that. A session lost while it holds a lock is then not revoked (its
 * holder froze or was cut off: the delay is for it to notice), and its keys end with the lease; a release deletes a
 * key, and closing revokes the lease, at once.
 *
 * <p>In fair mode a lock's key is {@code <prefix>/<name>/<lease id in hex>}, so one session may queue for a name only
 * once at a time: {@link #claim} and {@link #unclaim} keep track of that.
 */
final class EtcdSession {

    private static final Logger log = LoggerFactory.getLogger(EtcdSession.class);

    private final EtcdCalls calls;
    private final long id;
    /** The lease id in hex, as keys and messages name it. */
    private final String hexId;
    /** The validity a keep-alive gives: the TTL without the lock-delay. */
    private final long ttlNanos;
    /** The lock-delay in whole seconds, granted on top of the TTL (see the class comment); 0 for none. */
    private final long delaySeconds;

    private final Duration requestTimeout;
    private final Runnable onLost;
    private final Consumer<EtcdSession> onIdle;
    private boolean retired; // guarded by this
    /** Names claimed, each by the owner id of the attempt that has it. */
    private final Map<String, String> claimed = new HashMap<>(); // guarded by this

    private final Set<EtcdLease> leases = ConcurrentHashMap.newKeySet();
    /** Told the reason when the session is lost: fair waiters, whose place in a queue is a key of this lease. */
    private final Set<Consumer<String>> waiters = ConcurrentHashMap.newKeySet();
    /** Keys of attempts that could not be deleted at once, by key. */
    private final Map<String, PendingDelete> pendingDeletes = new ConcurrentHashMap<>();

    /**
     * A key to delete if it still holds {@code value}; then {@code claimedName} (if any) is given back from the attempt
     * of {@code ownerId}, once {@code giveBackAfter} has completed too.
     */
    private record PendingDelete(
            String value, String ownerId, String claimedName, CompletableFuture<?> giveBackAfter) {}

    private final AtomicBoolean lost = new AtomicBoolean();
    private volatile long validUntilNanos;
    private volatile String lostReason;
    private volatile ScheduledFuture<?> keepAlive;
    /** When the latest keep-alive tick was sent, and the latest one answered was sent (0: none yet). */
    private volatile long lastTickSentNanos;

    private volatile long lastAnsweredSentNanos;
    /** Whether the keep-alives go unanswered now; see {@link #keepAliveFailing}. */
    private final AtomicBoolean keepAlivesFailing = new AtomicBoolean();

    EtcdSession(
            EtcdCalls calls,
            long id,
            long grantedTtlSeconds,
            long delaySeconds,
            long grantSentNanos,
            Runnable onLost,
            Consumer<EtcdSession> onIdle) {
        this.calls = calls;
        this.id = id;
        this.hexId = Long.toHexString(id);
        this.delaySeconds = delaySeconds;
        this.ttlNanos = validityNanos(grantedTtlSeconds);
        this.validUntilNanos = grantSentNanos + ttlNanos - driftNanos(ttlNanos);
        this.requestTimeout = Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(100), ttlNanos / 3));
        this.onLost = onLost;
        this.onIdle = onIdle;
    }

    /** The validity an answer with {@code ttlSeconds} gives: that TTL less the lock-delay, at least a second. */
    private long validityNanos(long ttlSeconds) {
        return TimeUnit.SECONDS.toNanos(Math.max(1, ttlSeconds - delaySeconds));
    }

    /** The clock-drift allowance of a lease of {@code ttlNanos}: TTL/100 + 2 ms (see the class comment). */
    static long driftNanos(long ttlNanos) {
        return ttlNanos / 100 + TimeUnit.MILLISECONDS.toNanos(2);
    }

    /** Starts the keep-alives, every third of the TTL. */
    void start() {
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(50), ttlNanos / 3);
        keepAlive = calls.timer().scheduleWithFixedDelay(this::keepAliveTick, period, period, TimeUnit.NANOSECONDS);
    }

    long id() {
        return id;
    }

    /** The lease id as etcd's {@code concurrency.Mutex} writes it into a key: lower-case hex, no padding. */
    String hexId() {
        return hexId;
    }

    long validUntilNanos() {
        return validUntilNanos;
    }

    boolean isLost() {
        return lost.get();
    }

    /** Whether new locks may be put on this session: not lost, and its validity not run out. */
    boolean isUsable() {
        if (lost.get()) {
            return false;
        }
        if (calls.ticker().read() - validUntilNanos >= 0) {
            lose("no keep-alive of lease " + hexId() + " reached etcd before its TTL ran out");
            return false;
        }
        return true;
    }

    String lostReason() {
        return lostReason;
    }

    /**
     * Takes {@code name} for the attempt of {@code ownerId}; false if another attempt has it, or the session is lost or
     * retired.
     */
    synchronized boolean claim(String name, String ownerId) {
        return !retired && isUsable() && claimed.putIfAbsent(name, ownerId) == null;
    }

    /**
     * Gives {@code name} back if the attempt of {@code ownerId} has it; the attempt's key is gone (or handed to {@link
     * #deleteLater}). A give-back that comes late (a deletion handed to the session that ends after the name was given
     * back and taken again) leaves the new owner's claim alone: another attempt of this session would otherwise take the
     * same queue key and delete the new owner's key as stale.
     */
    void unclaim(String name, String ownerId) {
        boolean idle;
        synchronized (this) {
            idle = claimed.remove(name, ownerId) && claimed.isEmpty();
        }
        if (idle) {
            onIdle.accept(this);
        }
    }

    /**
     * Retires the session if nothing of it is left (no name claimed, no lock held, no key waiting for deletion): it
     * takes no new claims, and the caller revokes it. False if it is still in use.
     */
    synchronized boolean retireIfIdle() {
        if (retired || !claimed.isEmpty() || !leases.isEmpty() || !pendingDeletes.isEmpty()) {
            return false;
        }
        retired = true;
        return true;
    }

    /**
     * Registers a granted lock, to be told if the session is lost; false if it already is, or is retired (its revoke,
     * which deletes the lock's key, about to be sent): this and {@link #retireIfIdle} exclude each other.
     */
    boolean adopt(EtcdLease lease) {
        synchronized (this) {
            if (retired) {
                return false;
            }
            leases.add(lease);
        }
        if (lost.get()) {
            leases.remove(lease);
            return false;
        }
        return true;
    }

    void forget(EtcdLease lease) {
        leases.remove(lease);
    }

    /**
     * Registers a waiter whose place in a queue is a key of this lease, to be told the reason if the session is lost;
     * false if it already is (then the waiter is not registered).
     */
    boolean watchLoss(Consumer<String> waiter) {
        waiters.add(waiter);
        if (lost.get()) {
            waiters.remove(waiter);
            return false;
        }
        return true;
    }

    /** Unregisters a waiter of {@link #watchLoss}, once it has ended. */
    void unwatchLoss(Consumer<String> waiter) {
        waiters.remove(waiter);
    }

    /**
     * Deletes {@code key} if it still holds {@code value} (what the attempt of {@code ownerId} put: its owner id, or an
     * election candidate's identity), retrying with the keep-alives until it succeeds or the session ends (which
     * removes the key anyway); for an attempt whose clean-up could not reach etcd. Then {@code claimedName} (if not
     * null) is given back from that attempt.
     */
    void deleteLater(String key, String value, String ownerId, String claimedName) {
        deleteLater(key, value, ownerId, claimedName, CompletableFuture.completedFuture(null));
    }

    /**
     * As {@link #deleteLater(String, String, String, String)}, but {@code claimedName} is given back only once {@code
     * giveBackAfter} has completed too (normally or not): for a release whose plain delete may still be in flight,
     * which must not land on the key of a later attempt of this session (see {@link EtcdLockBackend#release}).
     */
    void deleteLater(String key, String value, String ownerId, String claimedName, CompletableFuture<?> giveBackAfter) {
        pendingDeletes.put(key, new PendingDelete(value, ownerId, claimedName, giveBackAfter));
    }

    /** A keep-alive sent now; completes with the new validity, or exceptionally. */
    java.util.concurrent.CompletableFuture<Long> keepAliveNow(Deadline deadline) {
        long sent = calls.ticker().read();
        return calls.keepAliveOnce(id, deadline).handle((response, failure) -> {
            if (failure == null && response.getTTL() > 0) {
                long ttl = validityNanos(response.getTTL());
                long until = sent + ttl - driftNanos(ttl);
                synchronized (this) {
                    if (until > validUntilNanos) {
                        validUntilNanos = until;
                    }
                }
                lastAnsweredSentNanos = sent;
                keepAliveFailing(false);
                return until;
            }
            if (failure == null || EtcdCalls.isNotFound(EtcdCalls.unwrap(failure))) {
                lose("etcd reports its lease " + hexId() + " expired");
                throw new java.util.concurrent.CompletionException(
                        new io.distlock.LockBackendException("The etcd lease " + hexId() + " has expired"));
            }
            if (calls.ticker().read() - validUntilNanos >= 0) {
                lose("no keep-alive of lease " + hexId() + " reached etcd before its TTL ran out: "
                        + EtcdCalls.unwrap(failure));
            }
            throw new java.util.concurrent.CompletionException(EtcdCalls.unwrap(failure));
        });
    }

    private void keepAliveTick() {
        if (lost.get()) {
            return;
        }
        if (calls.ticker().read() - validUntilNanos >= 0) {
            lose("no keep-alive of lease " + hexId() + " reached etcd before its TTL ran out");
            return;
        }
        // One keep-alive every period, answered or not: the client spreads them over the members, and one that went
        // to a frozen or cut-off member gets no answer while the next may reach a member that answers. A slow answer
        // still counts (validity runs from its send), so each waits until the validity ends: at most three in flight.
        long left = validUntilNanos - calls.ticker().read();
        long previous = lastTickSentNanos;
        if (previous != 0 && lastAnsweredSentNanos - previous < 0) {
            keepAliveFailing(true); // the previous tick's keep-alive, a period ago, is still unanswered
        }
        lastTickSentNanos = calls.ticker().read();
        keepAliveNow(Deadline.after(Duration.ofNanos(Math.max(left, 1)), calls.ticker()))
                .whenComplete((until, failure) -> {
                    if (failure != null && !lost.get()) {
                        log.debug("Keep-alive of etcd lease {} failed; trying again: {}", hexId(), failure.toString());
                    }
                });
        pendingDeletes.forEach((key, pending) -> calls.txn(
                        "deleting the abandoned key " + key,
                        txn -> txn.If(new Cmp(
                                        EtcdCalls.bytes(key),
                                        Cmp.Op.EQUAL,
                                        CmpTarget.value(EtcdCalls.bytes(pending.value()))))
                                .Then(Op.delete(EtcdCalls.bytes(key), DeleteOption.DEFAULT)),
                        Deadline.after(requestTimeout, calls.ticker()))
                .thenRun(() -> {
                    pendingDeletes.remove(key, pending);
                    if (pending.claimedName() != null) {
                        pending.giveBackAfter()
                                .whenComplete((r, e) -> unclaim(pending.claimedName(), pending.ownerId()));
                    }
                }));
    }

    /**
     * Tells the session's locks, once per change, that its keep-alives go unanswered ({@code true}: the previous one
     * still unanswered when the next is due) or are answered again: the locker warns a lock's holder when its validity
     * left falls below the threshold while they fail ({@link io.distlock.RemoteLock#onAtRisk}).
     */
    private void keepAliveFailing(boolean failing) {
        if (keepAlivesFailing.compareAndSet(!failing, failing)) {
            leases.forEach(lease -> lease.keepAliveFailing(failing));
        }
    }

    /** Marks the session lost, tells its locks, and revokes the lease in case etcd still has it. */
    void lose(String reason) {
        if (!lost.compareAndSet(false, true)) {
            return;
        }
        lostReason = reason;
        log.warn("etcd session (lease {}) lost: {}", hexId(), reason);
        stopKeepAlive();
        onLost.run();
        boolean held = !leases.isEmpty();
        for (EtcdLease lease : leases) {
            lease.lose(calls.ticker().read(), reason);
        }
        leases.clear();
        for (Consumer<String> waiter : waiters) {
            waiter.accept(reason);
        }
        waiters.clear();
        if (held && delaySeconds > 0) {
            // An unclean end: the keys stay until the lease, TTL plus lock-delay, runs out (see the class comment).
            log.debug("Not revoking etcd lease {}: its locks are kept for the lock-delay", hexId());
            return;
        }
        revoke(Deadline.after(requestTimeout, calls.ticker()));
    }

    /** Stops the keep-alives and revokes the lease: its keys go with it. */
    java.util.concurrent.CompletableFuture<?> close(Deadline deadline) {
        lost.set(true);
        stopKeepAlive();
        return revoke(deadline);
    }

    private java.util.concurrent.CompletableFuture<?> revoke(Deadline deadline) {
        return calls.revoke(id, deadline).exceptionally(e -> {
            log.debug("Could not revoke etcd lease {}; it expires by itself: {}", hexId(), e.toString());
            return null;
        });
    }

    private void stopKeepAlive() {
        ScheduledFuture<?> k = keepAlive;
        if (k != null) {
            k.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "EtcdSession[lease " + hexId() + (lost.get() ? ", lost" : "") + "]";
    }
}
