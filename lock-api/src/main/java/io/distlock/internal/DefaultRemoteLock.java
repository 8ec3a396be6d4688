package io.distlock.internal;

import io.distlock.LeaseRiskListener;
import io.distlock.LockKind;
import io.distlock.LockObserver;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handle of one granted acquisition, built from its request and lease by {@link HeldLocks#adopt}. A small state
 * machine: {@code HELD}, then exactly one of {@code RELEASED} or {@code LOST}. Listeners of {@link #onLost} fire once,
 * on the transition to {@code LOST}. What the store is told (release, extension, the clean-up of a lost lease) goes
 * through the {@link HeldLocks} the handle belongs to; the {@link LeaseKeeper} reads and moves its validity.
 */
final class DefaultRemoteLock implements RemoteLock {

    private static final Logger log = LoggerFactory.getLogger(DefaultRemoteLock.class);

    private enum State {
        HELD,
        RELEASED,
        LOST
    }

    private final HeldLocks locks;
    private final String key;
    private final LockKind kind;
    private final String ownerId;
    /** The lease asked for: the locker's lease time, or a fixed lease's length. */
    private final Duration leaseTime;

    private final LossListeners<RemoteLock> lossListeners;
    /** The {@link #onAtRisk} listeners and where each runs (null: the locker's listener executor); guarded by this. */
    private List<RiskListener> riskListeners;

    /**
     * One {@link #onAtRisk} listener, where it runs (null: the locker's listener executor), and its latest call: each
     * call runs after the one before it, so a listener hears {@code atRisk} and {@code recovered} in the order the
     * lease keeper raised them, on any executor. {@link #last} is moved only by the lease keeper, under its monitor.
     */
    private static final class RiskListener {
        final LeaseRiskListener listener;
        final Executor executor;
        CompletableFuture<Void> last = CompletableFuture.completedFuture(null);

        RiskListener(LeaseRiskListener listener, Executor executor) {
            this.listener = listener;
            this.executor = executor;
        }
    }

    /** The {@link #onReleaseRequested} listeners and where each runs (null: the listener executor); guarded by this. */
    private List<ReleaseListener> releaseListeners;
    /** How many release requests reached this lock while it had no {@link #onReleaseRequested} listener; guarded by this. */
    private int unheardReleaseRequests;

    private record ReleaseListener(Consumer<? super RemoteLock> listener, Executor executor) {}

    private final Lease lease;
    private State state = State.HELD;
    /** The validity renewal last reported; for session leases the lease's own moving value is read instead. */
    private long renewedUntilNanos;

    private boolean renewedOnce;
    /** A fixed lease (not renewed) ends at {@link #fixedUntilNanos}, a ticker reading. */
    private boolean fixed;

    private long fixedUntilNanos;
    private String lossReason;
    private volatile LockObserver.Hold hold = Observing.NO_HOLD;

    /**
     * The lock {@code request} asked for, granted {@code lease} just now: renewed for as long as it is held unless
     * {@code fixed}; a fixed lease ends the request's lease time from now at the latest, whatever the store's lease
     * says (a session lease moves on).
     */
    DefaultRemoteLock(HeldLocks locks, LockRequest request, Lease lease, boolean fixed) {
        this.locks = locks;
        this.key = request.key();
        this.kind = request.kind();
        this.ownerId = request.ownerId();
        this.leaseTime = request.leaseTime();
        this.lease = Objects.requireNonNull(lease, "lease");
        this.fixed = fixed;
        if (fixed) {
            fixedUntilNanos = locks.ticker().read() + leaseTime.toNanos();
        }
        this.lossListeners = new LossListeners<>(this, locks.listenerExecutor());
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

    Lease lease() {
        return lease;
    }

    /** Whether the lock is in the held state (without checking its validity). */
    synchronized boolean inHeldState() {
        return state == State.HELD;
    }

    /** Whether the grant's validity already ran out (a reply that reached us after the lease it granted). */
    synchronized boolean grantExpired() {
        return locks.ticker().read() - validUntilNanos() >= 0;
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
    public LockKind kind() {
        return kind;
    }

    @Override
    public String ownerId() {
        return ownerId;
    }

    @Override
    public OptionalLong fencingToken() {
        return lease.fencingToken();
    }

    @Override
    public boolean isHeld() {
        boolean fixedLease;
        synchronized (this) {
            if (state != State.HELD) {
                return false;
            }
            if (locks.ticker().read() - validUntilNanos() < 0) {
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
            left = validUntilNanos() - locks.ticker().read();
        }
        return locks.clock().instant().plus(Duration.ofNanos(Math.max(0, left)));
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

    @Override
    public RemoteLock onAtRisk(LeaseRiskListener listener) {
        return addRiskListener(Objects.requireNonNull(listener, "listener"), null);
    }

    @Override
    public RemoteLock onAtRisk(LeaseRiskListener listener, Executor executor) {
        return addRiskListener(
                Objects.requireNonNull(listener, "listener"), Objects.requireNonNull(executor, "executor"));
    }

    private synchronized RemoteLock addRiskListener(LeaseRiskListener listener, Executor executor) {
        if (state == State.HELD) {
            if (riskListeners == null) {
                riskListeners = new ArrayList<>(2);
            }
            riskListeners.add(new RiskListener(listener, executor));
        }
        return this;
    }

    @Override
    public RemoteLock onReleaseRequested(Consumer<? super RemoteLock> listener) {
        return addReleaseListener(new ReleaseListener(Objects.requireNonNull(listener, "listener"), null));
    }

    @Override
    public RemoteLock onReleaseRequested(Consumer<? super RemoteLock> listener, Executor executor) {
        return addReleaseListener(new ReleaseListener(
                Objects.requireNonNull(listener, "listener"), Objects.requireNonNull(executor, "executor")));
    }

    private RemoteLock addReleaseListener(ReleaseListener listener) {
        int unheard;
        synchronized (this) {
            if (state != State.HELD) {
                return this;
            }
            if (releaseListeners == null) {
                releaseListeners = new ArrayList<>(1);
            }
            releaseListeners.add(listener);
            unheard = unheardReleaseRequests;
            unheardReleaseRequests = 0;
        }
        for (int i = 0; i < unheard; i++) {
            tellReleaseListener(listener);
        }
        return this;
    }

    /**
     * Somebody asked this lock's holder to let go: told by the backend (through the {@link PendingGrant}). Runs the
     * {@link #onReleaseRequested} listeners, or keeps the request for the first one registered.
     */
    void releaseRequested() {
        List<ReleaseListener> listeners;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            if (releaseListeners == null) {
                unheardReleaseRequests++;
                log.info(
                        "Lock '{}' of owner {} was asked to let go; it has no onReleaseRequested listener yet",
                        key,
                        ownerId);
                return;
            }
            listeners = List.copyOf(releaseListeners);
        }
        log.info("Lock '{}' of owner {} was asked to let go", key, ownerId);
        listeners.forEach(this::tellReleaseListener);
    }

    private void tellReleaseListener(ReleaseListener l) {
        Executor executor = l.executor() != null ? l.executor() : locks.listenerExecutor();
        try {
            executor.execute(() -> {
                try {
                    l.listener().accept(this);
                } catch (RuntimeException e) {
                    log.warn("An onReleaseRequested listener of lock '{}' threw", key, e);
                }
            });
        } catch (RejectedExecutionException e) {
            log.warn("The executor of an onReleaseRequested listener of lock '{}' refused it", key, e);
        }
    }

    /** The backend's keep-alive of this lock's lease fails, or works again: for the lease keeper's warning. */
    void keepAliveFailing(boolean failing) {
        locks.keepAliveFailing(this, failing);
    }

    /** Tells the {@link #onAtRisk} listeners that the lock is at risk, {@code left} before its validity ends. */
    void atRisk(Duration left) {
        log.warn(
                "Lock '{}' of owner {} is at risk: renewals failing, {} of its validity left",
                key,
                ownerId,
                DurationText.of(left.truncatedTo(ChronoUnit.MILLIS)));
        tellRiskListeners(l -> l.atRisk(this, left));
    }

    /** Tells the {@link #onAtRisk} listeners that the lock is safe again. */
    void recovered() {
        log.info("Lock '{}' of owner {} recovered: renewed again before its validity ran out", key, ownerId);
        tellRiskListeners(l -> l.recovered(this));
    }

    /**
     * Hands the call to each listener's executor, after that listener's previous call. Called by the lease keeper under
     * its monitor, which orders the calls; a refusing executor skips the call, not the later ones.
     */
    private void tellRiskListeners(Consumer<LeaseRiskListener> call) {
        List<RiskListener> listeners;
        synchronized (this) {
            if (state != State.HELD || riskListeners == null) {
                return;
            }
            listeners = List.copyOf(riskListeners);
        }
        for (RiskListener l : listeners) {
            Executor executor = l.executor != null ? l.executor : locks.listenerExecutor();
            Runnable task = () -> {
                try {
                    call.accept(l.listener);
                } catch (RuntimeException e) {
                    log.warn("An onAtRisk listener of lock '{}' threw", key, e);
                }
            };
            l.last = l.last.handle((done, failed) -> null).thenRunAsync(task, executor);
        }
    }

    /**
     * Moves a held lock to {@code LOST} and fires the listeners once. Called by the lease keeper, by the backend's
     * loss listener (through the {@link PendingGrant}), or by {@link #isHeld()} when validity ran out. A no-op in any
     * other state.
     */
    void markLost(String reason) {
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            state = State.LOST;
            lossReason = reason;
            riskListeners = null;
            releaseListeners = null;
        }
        log.warn("Lock '{}' of owner {} was lost: {}", key, ownerId, reason);
        hold.lost(reason);
        locks.lost(this);
        lossListeners.lost();
    }

    @Override
    public ReleaseResult release() {
        Optional<ReleaseResult> unheld = giveUp();
        if (unheld.isPresent()) {
            return unheld.get();
        }
        ReleaseResult result = locks.release(this);
        hold.released(result);
        return result;
    }

    @Override
    public boolean extend(Duration leaseTime) {
        Checks.positive(leaseTime, "leaseTime");
        return isHeld() && locks.extend(this, leaseTime);
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
        ReleaseResult result = locks.releaseAfter(this, delay);
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
                default:
                    state = State.RELEASED;
                    lossListeners.clear();
                    riskListeners = null;
                    releaseListeners = null;
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
        return "RemoteLock[" + key + (kind == LockKind.LOCK ? "" : ", " + kind.label()) + ", owner=" + ownerId + ", "
                + state + "]";
    }
}
