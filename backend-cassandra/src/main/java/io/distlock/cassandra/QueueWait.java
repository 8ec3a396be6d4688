package io.distlock.cassandra;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One waiting acquisition of the queue algorithm (Listing 6's loop), driven by callbacks: poll (an asynchronous chain
 * of driver requests); when not granted, wait for the poll timer or for a release of the key in this backend, and poll
 * again. No thread is parked while waiting.
 *
 * <p>Ends with the lease, with empty once the deadline has passed (after withdrawing from the store), or exceptionally
 * when the store stayed unreachable to the deadline. Cancelling {@link #result()} withdraws it: a poll in flight then
 * withdraws when it answers, and a grant it brings is released. {@link #settled()} completes when nothing of this
 * acquisition is left in flight or in the store.
 */
final class QueueWait {

    private static final Logger LOG = LoggerFactory.getLogger(QueueWait.class);

    private final QueueAlgorithm.Attempt attempt;
    private final QueueAlgorithm algorithm;
    private final LocalWakeUps wakeUps;
    private final ScheduledExecutorService timers;
    private final Deadline deadline;
    private final Duration operationTimeout;
    private final CompletableFuture<Optional<CassandraLease>> result = new CompletableFuture<>();
    private final CompletableFuture<Void> settled = new CompletableFuture<>();
    private LocalWakeUps.Waiter waiter;
    private LockBackendException lastFailure; // touched by the one poll in flight

    // Guarded by this.
    private boolean inFlight;
    private boolean armed;
    private boolean finished;
    private ScheduledFuture<?> timer;
    private long arming; // which timer is the live one

    QueueWait(
            QueueAlgorithm.Attempt attempt,
            QueueAlgorithm algorithm,
            LocalWakeUps wakeUps,
            ScheduledExecutorService timers,
            Deadline deadline,
            Duration operationTimeout) {
        this.attempt = attempt;
        this.algorithm = algorithm;
        this.wakeUps = wakeUps;
        this.timers = timers;
        this.deadline = deadline;
        this.operationTimeout = operationTimeout;
    }

    /** The lease, empty after the deadline, or the store's failure; cancel it to withdraw. */
    CompletableFuture<Optional<CassandraLease>> result() {
        return result;
    }

    /** Completes when nothing of this acquisition is left in flight or in the store. */
    CompletableFuture<Void> settled() {
        return settled;
    }

    /** Registers for wake-ups (before the first poll, so that no release between poll and wait is missed). */
    QueueWait start() {
        waiter = wakeUps.register(attempt.key(), this::onSignal);
        result.whenComplete((v, e) -> {
            if (result.isCancelled()) {
                withdraw();
            }
        });
        poll();
        return this;
    }

    /**
     * Waits on the calling thread. When interrupted, withdraws (releasing a grant that won the race) and waits until
     * that is done, so that nothing is left in the store when the {@link InterruptedException} is thrown.
     */
    Optional<CassandraLease> await() throws InterruptedException {
        try {
            return result.get();
        } catch (InterruptedException e) {
            if (!result.cancel(false) && !result.isCompletedExceptionally()) {
                result.getNow(Optional.empty()).ifPresent(this::releaseQuietly);
            }
            awaitSettled();
            throw e;
        } catch (ExecutionException e) {
            throw CqlCalls.unwrap(e.getCause());
        }
    }

    private void awaitSettled() {
        try {
            settled.get(operationTimeout.toNanos() * 3 + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the clean-up goes on in the background; the cells run out with their TTL in any case
        }
    }

    private void poll() {
        int seen;
        synchronized (this) {
            if (finished || inFlight) {
                return;
            }
            disarm();
            inFlight = true;
            seen = waiter.signals();
        }
        CompletionStage<QueueAlgorithm.Poll> polled;
        try {
            polled = attempt.pollAsync();
        } catch (RuntimeException e) {
            polled = CompletableFuture.failedFuture(e);
        }
        polled.whenComplete((p, error) -> onPoll(p, error, seen));
    }

    private void onPoll(QueueAlgorithm.Poll polled, Throwable error, int signalsBefore) {
        boolean withdrawn;
        synchronized (this) {
            inFlight = false;
            withdrawn = finished;
        }
        int place = 1; // after a failure: poll again soon
        if (error == null) {
            lastFailure = null;
            if (polled.lease().isPresent()) {
                granted(polled.lease().get(), withdrawn);
                return;
            }
            place = polled.place();
        } else if (CqlCalls.unwrap(error) instanceof LockBackendException failure) {
            lastFailure = failure;
            LOG.debug("Waiting for lock '{}': {}", attempt.key(), failure.toString());
        } else {
            RuntimeException bug = CqlCalls.unwrap(error);
            end(() -> result.completeExceptionally(bug));
            return;
        }
        if (withdrawn) {
            end(() -> {});
            return;
        }
        if (deadline.hasPassed()) {
            LockBackendException failure = lastFailure;
            end(
                    failure == null
                            ? () -> result.complete(Optional.empty())
                            : () -> result.completeExceptionally(new LockBackendException(
                                    "Could not acquire lock '" + attempt.key() + "' before the deadline: "
                                            + failure.getMessage(),
                                    failure)));
            return;
        }
        arm(signalsBefore, attempt.untilNextPoll(place));
    }

    /** Not granted: wake on the poll timer, or at once if a release in this backend came while the poll was out. */
    private void arm(int signalsBefore, long delayNanos) {
        boolean closed = false;
        synchronized (this) {
            if (finished) {
                return;
            }
            if (waiter.signals() == signalsBefore) {
                long generation = ++arming;
                try {
                    timer = timers.schedule(
                            () -> onTimer(generation), deadline.remainingNanos(delayNanos), TimeUnit.NANOSECONDS);
                    armed = true;
                    return;
                } catch (RejectedExecutionException e) {
                    closed = true; // the backend was closed
                }
            }
        }
        if (closed) {
            end(() -> result.completeExceptionally(new LockBackendException(
                    "Could not acquire lock '" + attempt.key() + "': the Cassandra backend was closed")));
        } else {
            poll();
        }
    }

    private void onTimer(long generation) {
        synchronized (this) {
            if (!armed || generation != arming) {
                return; // woken by a release meanwhile
            }
            disarm();
        }
        poll();
    }

    private void onSignal() {
        synchronized (this) {
            if (!armed) {
                return;
            }
            disarm();
        }
        poll();
    }

    /** Guarded by this. */
    private void disarm() {
        armed = false;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void granted(CassandraLease lease, boolean withdrawn) {
        stop();
        if (withdrawn || !result.complete(Optional.of(lease))) {
            // cancelled meanwhile: the grant is nobody's
            algorithm.releaseAsync(lease).whenComplete((ours, e) -> {
                if (e != null) {
                    LOG.warn(
                            "Could not release lock '{}' granted after its wait was cancelled ({}); it runs out with"
                                    + " its TTL",
                            lease.key(),
                            CqlCalls.unwrap(e).getMessage());
                }
                settled.complete(null);
            });
        } else {
            settled.complete(null);
        }
    }

    /** Ends without a grant: withdraws from the store first, so that nothing is left when the result completes. */
    private void end(Runnable deliver) {
        stop();
        attempt.withdrawAsync().whenComplete((v, e) -> {
            try {
                deliver.run();
            } finally {
                settled.complete(null);
            }
        });
    }

    /** Cancelled by the caller: stop, and let a poll in flight withdraw when it answers. */
    private void withdraw() {
        boolean idle;
        synchronized (this) {
            if (finished) {
                return;
            }
            idle = !inFlight;
            finished = true;
            disarm();
        }
        waiter.close();
        if (idle) {
            attempt.withdrawAsync().whenComplete((v, e) -> settled.complete(null));
        }
    }

    private void stop() {
        synchronized (this) {
            finished = true;
            disarm();
        }
        waiter.close();
    }

    private void releaseQuietly(CassandraLease lease) {
        try {
            algorithm.release(lease);
        } catch (RuntimeException e) {
            LOG.warn(
                    "Could not release lock '{}' after an interrupted wait ({}); it runs out with its TTL",
                    lease.key(),
                    e.getMessage());
        }
    }
}
