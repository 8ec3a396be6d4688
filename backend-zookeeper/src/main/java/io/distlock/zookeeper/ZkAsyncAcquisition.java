package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException;

/**
 * The asynchronous form of a {@link ZkAcquisition}: no thread is held while waiting. Each look at the queue (create the
 * node, list the queue, leave a watch on the predecessor) runs as one short task; the predecessor's watch, a change of
 * connection state, or a timer schedules the next look. Until the node is created the looks run on the backend's step
 * executor, which has one thread, so the nodes of calls made one after another are created in call order (FIFO across
 * calls); the looks after it run on the locker's workers ({@code looks}), where the locker adopts a grant without
 * handing it to another thread. The looks of one acquisition never overlap.
 *
 * <p>Cancelling the future, or the deadline passing, deletes the queue node; a grant that arrives after the future was
 * cancelled is released.
 */
final class ZkAsyncAcquisition {

    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ZkAcquisition acquisition;
    private final SessionWatch sessions;
    private final Deadline deadline;
    private final Ticker ticker;
    private final Duration operationTimeout;
    /** Guarded by this: when a disconnection that began before a step ends the wait; null while connected. */
    private Deadline outage;

    private final ScheduledExecutorService steps;
    /** Where the looks run once the node exists: the locker's workers. */
    private final Executor looks;
    /** Whether the node was created (the looks then run on {@link #looks}). */
    private volatile boolean queued;

    private final Consumer<Lease> release;
    private final CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
    private final Runnable wakeUp = this::schedule;
    private final AtomicBoolean stepPending = new AtomicBoolean();
    private ScheduledFuture<?> deadlineTimer; // guarded by this
    private boolean ended; // the acquisition's node is gone or handed over; guarded by this

    ZkAsyncAcquisition(
            ZkAcquisition acquisition,
            SessionWatch sessions,
            Deadline deadline,
            Ticker ticker,
            Duration operationTimeout,
            ScheduledExecutorService steps,
            Executor looks,
            Consumer<Lease> release) {
        this.acquisition = acquisition;
        this.sessions = sessions;
        this.deadline = deadline;
        this.ticker = ticker;
        this.operationTimeout = operationTimeout;
        this.steps = steps;
        this.looks = looks;
        this.release = release;
    }

    CompletableFuture<Optional<Lease>> start() {
        sessions.addWakeUp(wakeUp);
        result.whenComplete((lease, failure) -> {
            sessions.removeWakeUp(wakeUp);
            if (result.isCancelled()) {
                execute(this::end); // withdraw: delete the queue node
            }
        });
        if (deadline.isBounded()) {
            synchronized (this) {
                deadlineTimer = steps.schedule(
                        () -> execute(this::deadlinePassed),
                        Math.max(0, deadline.remainingNanos()),
                        TimeUnit.NANOSECONDS);
            }
        }
        schedule();
        return result;
    }

    /**
     * Asks for one more look; several wake-ups before it runs give one look. Called from ZooKeeper's event thread and
     * Curator's state thread: never blocks.
     */
    private void schedule() {
        if (result.isDone() || !stepPending.compareAndSet(false, true)) {
            return;
        }
        execute(this::step, queued ? looks : steps);
    }

    private void execute(Runnable task) {
        execute(task, steps);
    }

    private void execute(Runnable task, Executor executor) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException closed) {
            result.completeExceptionally(
                    new LockBackendException("The ZooKeeper backend for " + sessions.connectString()
                            + " (or its locker) was closed while an asynchronous acquisition waited"));
        }
    }

    /** One look; a grant is handed over outside the lock, where the locker may adopt it on this thread. */
    private void step() {
        Optional<Lease> granted = look();
        if (granted.isPresent() && !result.complete(granted)) {
            release.accept(granted.get()); // cancelled meanwhile: the grant is nobody's
        }
    }

    /** The lease if this look was granted it (the acquisition has then ended), else empty. */
    private synchronized Optional<Lease> look() {
        stepPending.set(false);
        if (result.isDone() || ended) {
            return Optional.empty();
        }
        if (!sessions.isConnected()) {
            if (outage == null) {
                outage = Deadline.after(operationTimeout, ticker);
            }
            if (outage.hasPassed()) {
                fail(acquisition.unreachable("lockAsync")); // not connected for the whole connectTimeout
            } else {
                retryLater(); // no thread waits for the connection: the state change (or the timer) looks again
            }
            return Optional.empty();
        }
        outage = null;
        try {
            // each store call of the step waits at most the operation timeout, so a connection lost mid-step holds
            // the thread no longer
            Optional<Lease> lease = acquisition.look(deadline, wakeUp);
            queued |= acquisition.queued();
            if (lease.isPresent()) {
                ended = true;
                cancelTimer();
                return lease;
            } else if (acquisition.delayedNanos() > 0) {
                lookAfter(acquisition.delayedNanos()); // a lock-delay holds the grant back: no watch fires for it
            }
        } catch (TimeoutException e) {
            if (deadline.hasPassed()) {
                deadlinePassed();
            } else {
                fail(acquisition.unreachable("lockAsync")); // a call unanswered for the whole connectTimeout
            }
        } catch (KeeperException e) {
            if (ZkAcquisition.isConnectionTrouble(e)) {
                retryLater();
            } else {
                fail(acquisition.failure("lockAsync", e));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(new LockBackendException("Interrupted during an asynchronous acquisition", e));
        } catch (RuntimeException e) {
            fail(e);
        }
        return Optional.empty();
    }

    private void lookAfter(long nanos) {
        try {
            steps.schedule(this::schedule, deadline.remainingNanos(nanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // closing: the future is failed by the next execute, or by the locker
        }
    }

    private void retryLater() {
        lookAfter(RETRY_NANOS);
    }

    private synchronized void deadlinePassed() {
        if (result.isDone() || ended) {
            return;
        }
        if (!deadline.hasPassed()) {
            deadlineTimer = steps.schedule(
                    () -> execute(this::deadlinePassed), deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            return;
        }
        end();
        if (!sessions.isConnected()) {
            result.completeExceptionally(new LockBackendException("Gave up waiting for the lock at its deadline ("
                    + DurationText.of(deadline.maxWait().orElseThrow()) + ") while not connected to ZooKeeper at "
                    + sessions.connectString()));
        } else {
            result.complete(Optional.empty());
        }
    }

    private synchronized void fail(RuntimeException e) {
        end();
        result.completeExceptionally(e);
    }

    /** Deletes our queue node (if any) once; never the node of a grant handed over. */
    private synchronized void end() {
        if (ended) {
            return;
        }
        ended = true;
        cancelTimer();
        acquisition.leave();
    }

    private void cancelTimer() {
        if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
        }
    }
}
