package io.distlock.internal;

import io.distlock.LockBackendException;
import io.distlock.LockObserver;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.spi.Lease;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handle of one acquisition. A small state machine: {@code PENDING} (asked for, not granted) then {@code HELD},
 * then exactly one of {@code RELEASED} or {@code LOST}. Listeners of {@link #onLost} fire once, on the transition to
 * {@code LOST}.
 */
final class DefaultRemoteLock implements RemoteLock {

    private static final Logger log = LoggerFactory.getLogger(DefaultRemoteLock.class);

    private enum State {
        PENDING,
        HELD,
        RELEASED,
        LOST
    }

    private final DefaultRemoteLocker locker;
    private final String key;
    private final String ownerId;
    /** The lease asked for: the locker's lease time, or a fixed lease's length. */
    private final Duration leaseTime;

    private final LossListeners<RemoteLock> lossListeners;
    private State state = State.PENDING;
    private Lease lease;
    /** The validity renewal last reported; for session leases the lease's own moving value is read instead. */
    private long renewedUntilNanos;

    private boolean renewedOnce;
    /** A fixed lease (not renewed) ends at {@link #fixedUntilNanos}, a ticker reading. */
    private boolean fixed;

    private long fixedUntilNanos;
    private String lossReason;
    private volatile LockObserver.Hold hold = Observing.NO_HOLD;

    /**
     * A lock to be asked for: renewed for as long as it is held when {@code fixedLease} is empty, else held for that
     * fixed lease.
     */
    DefaultRemoteLock(DefaultRemoteLocker locker, String key, String ownerId, Optional<Duration> fixedLease) {
        this.locker = locker;
        this.key = key;
        this.ownerId = ownerId;
        this.leaseTime = fixedLease.orElse(locker.leaseTime());
        this.fixed = fixedLease.isPresent();
        this.lossListeners = new LossListeners<>(this, locker.listenerExecutor());
    }

    /**
     * Records the grant. Returns false if the backend reported the lease lost before it was even granted. A fixed lease
     * ends {@link #leaseTime} from now at the latest, whatever the store's lease says (a session lease moves on).
     */
    synchronized boolean granted(Lease lease) {
        this.lease = Objects.requireNonNull(lease, "lease");
        if (state == State.LOST) {
            return false;
        }
        state = State.HELD;
        if (fixed) {
            fixedUntilNanos = locker.ticker().read() + leaseTime.toNanos();
        }
        return true;
    }

    /** The lease to ask the store for. */
    Duration leaseTime() {
        return leaseTime;
    }

    /** Whether this lock is held for a fixed lease, which nothing renews. */
    synchronized boolean fixed() {
        return fixed;
    }

    /** Makes this a fixed lease that ends at {@code untilNanos} (a ticker reading), earlier or later than before. */
    synchronized void fixUntil(long untilNanos) {
        fixed = true;
        fixedUntilNanos = untilNanos;
    }

    /** Reports this lock's renewals, loss and release to {@code hold} from now on. */
    void observedBy(LockObserver.Hold hold) {
        this.hold = hold;
    }

    LockObserver.Hold hold() {
        return hold;
    }

    /** Why the lock was lost; null unless it was. */
    synchronized String lossReason() {
        return lossReason;
    }

    synchronized Lease lease() {
        return lease;
    }

    /** Whether the lock is in the held state (without checking its validity). */
    synchronized boolean inHeldState() {
        return state == State.HELD;
    }

    /** Whether the grant's validity already ran out (a reply that reached us after the lease it granted). */
    synchronized boolean grantExpired() {
        return locker.ticker().read() - validUntilNanos() >= 0;
    }

    /** A grant the locker will not hand over (stale, or the locker closed): no listener, no loss report. */
    synchronized void discard() {
        state = State.RELEASED;
        lossListeners.clear();
    }

    /** Records a renewal's new validity (a ticker reading); validity never moves back. */
    synchronized void renewed(long validUntilNanos) {
        if (!renewedOnce || validUntilNanos - renewedUntilNanos > 0) {
            renewedUntilNanos = validUntilNanos;
            renewedOnce = true;
        }
    }

    /** Until when the store guarantees this lock, as of the grant or the last renewal; a fixed lease's end at most. */
    synchronized long validUntilNanos() {
        long granted = lease.validUntilNanos();
        long valid = renewedOnce && renewedUntilNanos - granted > 0 ? renewedUntilNanos : granted;
        return fixed && fixedUntilNanos - valid < 0 ? fixedUntilNanos : valid;
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
        Lease l = lease();
        return l == null ? OptionalLong.empty() : l.fencingToken();
    }

    @Override
    public boolean isHeld() {
        boolean fixedLease;
        synchronized (this) {
            if (state != State.HELD) {
                return false;
            }
            if (locker.ticker().read() - validUntilNanos() < 0) {
                return true;
            }
            fixedLease = fixed;
        }
        markLost(fixedLease ? "its fixed lease ended" : "its lease ran out before it was renewed");
        return false;
    }

    @Override
    public Instant validUntil() {
        long left;
        synchronized (this) {
            if (lease == null) {
                return locker.clock().instant();
            }
            left = validUntilNanos() - locker.ticker().read();
        }
        return locker.clock().instant().plus(Duration.ofNanos(Math.max(0, left)));
    }

    @Override
    public RemoteLock onLost(Consumer<? super RemoteLock> listener) {
        lossListeners.add(listener, null);
        return this;
    }

    @Override
    public RemoteLock onLost(Consumer<? super RemoteLock> listener, Executor executor) {
        lossListeners.add(listener, Objects.requireNonNull(executor, "executor"));
        return this;
    }

    /**
     * Moves a pending or held lock to {@code LOST} and fires the listeners once. Called by the lease keeper, by the
     * backend's loss listener, or by {@link #isHeld()} when validity ran out. A no-op in any other state.
     */
    void markLost(String reason) {
        boolean wasHeld;
        synchronized (this) {
            if (state != State.HELD && state != State.PENDING) {
                return;
            }
            wasHeld = state == State.HELD;
            state = State.LOST;
            lossReason = reason;
        }
        // A pending lock has no listeners yet: the acquiring thread sees LOST in granted() and cleans up.
        if (wasHeld) {
            log.warn("Lock '{}' of owner {} was lost: {}", key, ownerId, reason);
            hold.lost(reason);
            locker.forget(this, true);
        }
        lossListeners.lost();
    }

    @Override
    public ReleaseResult release() {
        Optional<ReleaseResult> unheld = giveUp();
        if (unheld.isPresent()) {
            return unheld.get();
        }
        locker.forget(this, false);
        boolean freed;
        // A thread with its interrupt flag set still releases (a worker shutting down): the backend's wait for the
        // store's answer must not see the flag, which is given back afterwards.
        boolean interrupted = Thread.interrupted();
        try {
            freed = locker.backend().release(lease);
        } catch (LockBackendException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LockBackendException(
                    "Could not release lock '" + key + "' (owner " + ownerId
                            + "); the store frees it when its lease runs out: " + e,
                    e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (!freed) {
            log.warn("Lock '{}' of owner {} was no longer held by the store when released", key, ownerId);
            hold.released(ReleaseResult.ALREADY_LOST);
            return ReleaseResult.ALREADY_LOST;
        }
        hold.released(ReleaseResult.RELEASED);
        return ReleaseResult.RELEASED;
    }

    @Override
    public boolean extend(Duration leaseTime) {
        Checks.positive(leaseTime, "leaseTime");
        return isHeld() && locker.extend(this, leaseTime);
    }

    @Override
    public ReleaseResult releaseAfter(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isZero() || delay.isNegative()) {
            return release();
        }
        Optional<ReleaseResult> unheld = giveUp();
        if (unheld.isPresent()) {
            return unheld.get();
        }
        ReleaseResult result = locker.releaseAfter(this, delay);
        hold.released(result);
        return result;
    }

    /**
     * Moves a held lock to {@code RELEASED}; what to answer instead if it was not held. A lease that ran out is reported
     * as lost, not released.
     */
    private Optional<ReleaseResult> giveUp() {
        isHeld();
        synchronized (this) {
            switch (state) {
                case RELEASED:
                    return Optional.of(ReleaseResult.ALREADY_RELEASED);
                case LOST:
                    log.info("Lock '{}' of owner {} was already lost ({}) when released", key, ownerId, lossReason);
                    return Optional.of(ReleaseResult.ALREADY_LOST);
                case PENDING:
                    throw new IllegalStateException("Lock '" + key + "' was never granted");
                default:
                    state = State.RELEASED;
                    lossListeners.clear();
                    return Optional.empty();
            }
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public synchronized String toString() {
        return "RemoteLock[" + key + ", owner=" + ownerId + ", " + state + "]";
    }
}
