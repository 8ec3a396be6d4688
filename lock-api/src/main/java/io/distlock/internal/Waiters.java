package io.distlock.internal;

import io.distlock.LockerClosedException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A locker's close-safety: whether it is closed, and the calls waiting in it (threads blocked in the backend,
 * asynchronous acquisitions). Closing ends every wait with {@link LockerClosedException} (a blocked thread is
 * interrupted) and then gives the waits a moment to leave the backend, so that their queue entries are deleted before
 * it disconnects. The acquisition paths enter and leave; the held locks adopt a grant only {@link #whileOpen}; the
 * locker closes.
 */
final class Waiters {

    private static final Logger log = LoggerFactory.getLogger(Waiters.class);

    /** How long {@link #awaitGone} waits for interrupted waiters to leave the backend. */
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** A call waiting for a lock: a thread blocked in the backend, or an asynchronous call. */
    interface Waiter {
        /** The locker closed: end the wait at once with {@link LockerClosedException}. */
        void lockerClosed();
    }

    private final String backendName;
    private final LockerFailures failures;
    /** Guards {@link #closed} against adoption and the registration of waiters. */
    private final Object lifecycle = new Object();

    private final Set<Waiter> waiters = new HashSet<>(); // guarded by lifecycle
    private volatile boolean closed;

    Waiters(String backendName, LockerFailures failures) {
        this.backendName = backendName;
        this.failures = failures;
    }

    /** Throws {@link LockerClosedException} if the locker is closed. */
    void ensureOpen() {
        if (closed) {
            throw failures.closed();
        }
    }

    boolean closed() {
        return closed;
    }

    /** Counts {@code waiter} in until it {@link #leave}s; throws {@link LockerClosedException} if closed. */
    <W extends Waiter> W enter(W waiter) {
        synchronized (lifecycle) {
            if (closed) {
                throw failures.closed();
            }
            waiters.add(waiter);
        }
        return waiter;
    }

    /** Counts the calling thread in, about to block in the backend; it {@link #leave}s when it is back. */
    BlockedThread enterBlocked() {
        return enter(new BlockedThread(Thread.currentThread()));
    }

    void leave(Waiter waiter) {
        if (waiter instanceof BlockedThread blocked) {
            blocked.left();
        }
        synchronized (lifecycle) {
            waiters.remove(waiter);
            lifecycle.notifyAll();
        }
    }

    /**
     * Runs {@code action} unless the locker is closed, atomically with respect to {@link #close}: what it does is done
     * before the close's next step sees it. False if closed, {@code action} then not run.
     */
    boolean whileOpen(Runnable action) {
        synchronized (lifecycle) {
            if (closed) {
                return false;
            }
            action.run();
            return true;
        }
    }

    /** Marks the locker closed and ends every wait; false if it was closed already. */
    boolean close() {
        List<Waiter> waiting;
        synchronized (lifecycle) {
            if (closed) {
                return false;
            }
            closed = true;
            waiting = new ArrayList<>(waiters);
        }
        waiting.forEach(Waiter::lockerClosed);
        return true;
    }

    /** Gives the ended waits a moment to leave the backend (and delete their queue entries) before it closes. */
    void awaitGone() {
        long end = System.nanoTime() + CLOSE_WAIT_NANOS;
        boolean interrupted = false;
        synchronized (lifecycle) {
            while (!waiters.isEmpty()) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    log.warn(
                            "Closing the {} locker: {} wait(s) still ending; disconnecting anyway",
                            backendName,
                            waiters.size());
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lifecycle, left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** A thread blocked in the backend's {@code acquire}; closing the locker interrupts it. */
    static final class BlockedThread implements Waiter {
        private final Thread thread;
        private boolean inside = true; // guarded by this
        private boolean interrupted; // guarded by this

        private BlockedThread(Thread thread) {
            this.thread = thread;
        }

        @Override
        public synchronized void lockerClosed() {
            if (inside) {
                interrupted = true;
                thread.interrupt();
            }
        }

        /** Whether the close interrupted this thread: its failure is then the closed locker's. */
        synchronized boolean closedMeanwhile() {
            return interrupted;
        }

        /** Leaves the backend; an interrupt of ours that the backend did not consume is taken back. */
        private synchronized void left() {
            inside = false;
            if (interrupted) {
                Thread.interrupted();
            }
        }
    }
}
