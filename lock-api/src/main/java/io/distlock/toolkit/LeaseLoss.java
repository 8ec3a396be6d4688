package io.distlock.toolkit;

import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.spi.LockRequest;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The loss of one lease that the backend learns of by itself (a session ended, the lock's entry was deleted by someone
 * else): recorded once, the lease's validity frozen at the loss, and the locker told once through the request's
 * {@link LeaseLossListener}. For a {@link Lease} implementation of a {@link io.distlock.LeaseModel#SESSION} backend,
 * whose validity otherwise moves with its session. Thread-safe; {@link #lose} does not block.
 */
public final class LeaseLoss {

    private final LeaseLossListener listener;
    private final AtomicBoolean lost = new AtomicBoolean();
    private volatile long lostValidUntilNanos;

    /**
     * @param listener told of the loss, once: the {@link LockRequest#lossListener()} of the acquisition
     */
    public LeaseLoss(LeaseLossListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** Whether {@link #lose} was called. */
    public boolean isLost() {
        return lost.get();
    }

    /**
     * The lease's validity: the one frozen by {@link #lose} once lost, else {@code live}.
     *
     * @param live the validity while the lease is not lost, e.g. the session's
     */
    public long validUntilNanos(long live) {
        return lost.get() ? lostValidUntilNanos : live;
    }

    /**
     * Records the loss and tells the listener, the first time only; later calls change nothing.
     *
     * @param validUntilNanos the validity from now on, a {@link io.distlock.Ticker} reading no later than the moment
     *     of the loss
     * @param reason a short text for logs, passed to {@link LeaseLossListener#leaseLost}
     */
    public void lose(long validUntilNanos, String reason) {
        if (lost.get()) {
            return;
        }
        lostValidUntilNanos = validUntilNanos; // before the flag, so a reader that sees it lost sees this value
        if (lost.compareAndSet(false, true)) {
            listener.leaseLost(reason);
        }
    }

    /**
     * Tells the listener that the session's keep-alive fails, or works again ({@link
     * LeaseLossListener#keepAliveFailing}); nothing once the lease is lost.
     */
    public void keepAliveFailing(boolean failing) {
        if (!lost.get()) {
            listener.keepAliveFailing(failing);
        }
    }
}
