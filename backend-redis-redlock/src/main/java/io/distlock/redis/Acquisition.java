package io.distlock.redis;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One waiting acquisition, driven by callbacks: attempt; when the lock is held, wait for a release message on its key
 * (or the poll timer, if the message is lost); after a split vote or unanswered masters, wait a random delay of at
 * most {@code retryDelay} (seed 002) and ignore messages meanwhile, so that contenders that just split do not all
 * come back at once. No thread is parked while waiting.
 *
 * <p>Ends with the lease, with empty once the deadline has passed after a last attempt, or exceptionally when the
 * masters stayed unreachable to the end. Cancelling {@link #result()} withdraws it; an attempt in flight then deletes
 * what it set, and a grant that arrives too late is released. {@link #settled()} completes when nothing of this
 * acquisition is left in flight.
 */
final class Acquisition {

    private final Redlock redlock;
    private final ReleaseWaiters waiters;
    private final RedlockSettings settings;
    private final ScheduledExecutorService timers;
    private final Executor completion;
    private final LockRequest request;
    private final Deadline deadline;
    private final CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
    private final CompletableFuture<Void> settled = new CompletableFuture<>();
    private ReleaseWaiters.Waiter waiter;

    // Guarded by this.
    private boolean inFlight;
    private boolean armed;
    private boolean finished;
    private ScheduledFuture<?> timer;

    Acquisition(
            Redlock redlock,
            ReleaseWaiters waiters,
            RedlockSettings settings,
            ScheduledExecutorService timers,
            Executor completion,
            LockRequest request,
            Deadline deadline) {
        this.redlock = redlock;
        this.waiters = waiters;
        this.settings = settings;
        this.timers = timers;
        this.completion = completion;
        this.request = request;
        this.deadline = deadline;
    }

    CompletableFuture<Optional<Lease>> result() {
        return result;
    }

    CompletableFuture<Void> settled() {
        return settled;
    }

    /** Registers for wake-ups (before the first attempt, so no release between attempt and wait is missed). */
    Acquisition start() {
        waiter = waiters.register(settings.redisKey(request.key()), this::onSignal);
        result.whenComplete((v, e) -> {
            if (result.isCancelled()) {
                withdraw();
            }
        });
        attempt();
        return this;
    }

    private void attempt() {
        int seen;
        synchronized (this) {
            if (finished) {
                return;
            }
            armed = false;
            inFlight = true;
            seen = waiter.signals();
        }
        redlock.attempt(request).whenComplete((a, e) -> onAttempt(a, e, seen));
    }

    private void onAttempt(Redlock.Attempt attempt, Throwable error, int signalsBefore) {
        boolean withdrawn;
        synchronized (this) {
            inFlight = false;
            withdrawn = finished;
        }
        if (error != null) {
            finish(() -> result.completeExceptionally(new LockBackendException(
                    "Acquiring lock '" + request.key() + "' failed: " + Master.unwrap(error), error)));
            return;
        }
        if (attempt.outcome() == Redlock.Outcome.GRANTED) {
            RedlockLease lease = attempt.lease();
            if (withdrawn) {
                redlock.release(lease).whenComplete((t, e) -> settled.complete(null));
                return;
            }
            finish(() -> {
                if (!result.complete(Optional.of(lease))) {
                    redlock.release(lease); // cancelled meanwhile: the grant is nobody's
                }
            });
            return;
        }
        if (withdrawn) {
            settled.complete(null);
            return;
        }
        if (deadline.hasPassed()) {
            if (attempt.outcome() == Redlock.Outcome.UNANSWERED) {
                finish(() -> result.completeExceptionally(unreachable(attempt.tally())));
            } else {
                finish(() -> result.complete(Optional.empty()));
            }
            return;
        }
        if (attempt.outcome() == Redlock.Outcome.HELD) {
            awaitRelease(signalsBefore);
        } else {
            schedule(randomNanos(1, settings.retryDelay().toNanos()), false);
        }
    }

    private LockBackendException unreachable(Tally tally) {
        return new LockBackendException("Could not acquire lock '" + request.key() + "' within "
                + deadline.maxWait().map(Object::toString).orElse("its deadline") + ": too few Redis masters answered"
                + " for a majority of " + redlock.majority() + " of "
                + redlock.masters().size() + " (last attempt: "
                + tally + "; unanswered: " + redlock.unanswered(tally) + ")");
    }

    /** The lock is held: wake on a release message, on the first subscription's readiness, or on the poll timer. */
    private void awaitRelease(int signalsBefore) {
        synchronized (this) {
            if (finished) {
                return;
            }
            if (waiter.signals() != signalsBefore) {
                // released while our attempt was in flight: try again at once
            } else {
                armed = true;
                long poll = settings.pollInterval().toNanos();
                scheduleLocked(randomNanos(poll / 2, poll));
                CompletableFuture<Void> ready = waiters.subscribed();
                if (!ready.isDone()) {
                    ready.thenRun(this::onSignal); // the subscription may have missed a release: look again
                }
                return;
            }
        }
        attempt();
    }

    private void schedule(long delayNanos, boolean wakeOnSignal) {
        synchronized (this) {
            if (finished) {
                return;
            }
            armed = wakeOnSignal;
            scheduleLocked(delayNanos);
        }
    }

    private void scheduleLocked(long delayNanos) {
        long capped = Math.max(0, deadline.remainingNanos(delayNanos));
        timer = timers.schedule(this::onTimer, capped, TimeUnit.NANOSECONDS);
    }

    private void onTimer() {
        synchronized (this) {
            if (finished || inFlight) {
                return;
            }
            armed = false;
        }
        attempt();
    }

    private void onSignal() {
        synchronized (this) {
            if (finished || !armed || inFlight) {
                return;
            }
            armed = false;
            if (timer != null) {
                timer.cancel(false);
            }
        }
        attempt();
    }

    /** Cancelled by the caller: stop, and let an attempt in flight clean up after itself. */
    private void withdraw() {
        boolean idle;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            idle = !inFlight;
            if (timer != null) {
                timer.cancel(false);
            }
        }
        waiters.unregister(waiter);
        if (idle) {
            settled.complete(null);
        }
    }

    private void finish(Runnable deliver) {
        synchronized (this) {
            finished = true;
            if (timer != null) {
                timer.cancel(false);
            }
        }
        waiters.unregister(waiter);
        try {
            completion.execute(deliver);
        } catch (RuntimeException rejected) {
            deliver.run();
        } finally {
            settled.complete(null);
        }
    }

    private static long randomNanos(long min, long max) {
        return max <= min ? min : ThreadLocalRandom.current().nextLong(min, max + 1);
    }
}
