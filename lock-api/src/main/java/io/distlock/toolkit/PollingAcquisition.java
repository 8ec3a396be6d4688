package io.distlock.toolkit;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A waiting acquisition driven by callbacks, for a store that keeps no waiter and tells it nothing (Redis,
 * Cassandra): one {@link #attempt}; when not granted, wait for a timer or for a wake-up of the key ({@link WakeUps}),
 * and attempt again, until granted, the deadline, or cancelled. No thread is parked while waiting, and the blocking
 * {@link #await} waits on the same chain, so a backend has one wait loop for both.
 *
 * <p>A backend supplies the step ({@link #attempt}, answering a {@link Step}), {@link #withdraw} (removes what its
 * attempts left in the store) and {@link #release} (gives back a grant nobody can receive any more).
 *
 * <p>A store that fails an attempt ({@link Step#storeFailed}, {@link Step#storeStalled}) is tried again after an
 * exponential back-off with jitter ({@value #FIRST_RETRY_MILLIS} ms doubling to {@value #LAST_RETRY_MILLIS} ms, never
 * past the deadline), so an outage costs a few requests a second, not hundreds; once the store has been unreachable
 * at every attempt for the <em>outage limit</em> (the backend's {@code connectTimeout}), the acquisition ends with
 * the last failure, deadline or not: a wait without deadline fails loudly on a dead store instead of hanging. A
 * deadline that passes while the store fails ends the wait with the store's failure, not empty.
 *
 * <p>{@link #result()} completes with the lease; with empty once the deadline has passed (after withdrawing); or
 * exceptionally when an attempt fails (after withdrawing), or when the store has failed every attempt for the outage
 * limit or until the deadline. Cancelling {@link #result()} withdraws: an attempt in flight withdraws when it answers, and a grant
 * it brings is released. {@link #settled()} completes when nothing of this acquisition is left in flight or in the
 * store.
 *
 * @param <L> the backend's lease
 */
public abstract class PollingAcquisition<L extends Lease> {

    private static final Logger LOG = LoggerFactory.getLogger(PollingAcquisition.class);

    /**
     * What one attempt found: the lease, or when to attempt again.
     *
     * @param <L> the backend's lease
     */
    public static final class Step<L extends Lease> {
        private final L lease;
        private final long delayNanos;
        private final boolean wakeOnRelease;
        private final LockBackendException storeFailure;
        private final boolean unreachable;

        private Step(
                L lease,
                long delayNanos,
                boolean wakeOnRelease,
                LockBackendException storeFailure,
                boolean unreachable) {
            this.lease = lease;
            this.delayNanos = delayNanos;
            this.wakeOnRelease = wakeOnRelease;
            this.storeFailure = storeFailure;
            this.unreachable = unreachable;
        }

        /** Granted. */
        public static <L extends Lease> Step<L> granted(L lease) {
            return new Step<>(Objects.requireNonNull(lease, "lease"), 0, false, null, false);
        }

        /**
         * Not granted: attempt again after {@code delayNanos}, or at once when the key is released here (also when
         * the release came while this attempt was in flight).
         */
        public static <L extends Lease> Step<L> pollAfter(long delayNanos) {
            return new Step<>(null, delayNanos, true, null, false);
        }

        /**
         * Not granted, after a conflict: attempt again after {@code delayNanos}, deaf to releases meanwhile (so that
         * rivals that just collided do not all come back at once).
         */
        public static <L extends Lease> Step<L> backOff(long delayNanos) {
            return new Step<>(null, delayNanos, false, null, false);
        }

        /**
         * Not granted: the store could not be reached (no node answered, or too few to serve it). The acquisition
         * attempts again after its exponential back-off, deaf to releases meanwhile, and ends with {@code failure}
         * (which should name the store and what it answered) once the store has been unreachable at every attempt for
         * the outage limit, or at the deadline.
         */
        public static <L extends Lease> Step<L> storeFailed(LockBackendException failure) {
            return new Step<>(null, 0, false, Objects.requireNonNull(failure, "failure"), true);
        }

        /**
         * Not granted: the store answered, but could not complete the attempt (a replica timed out while the cluster
         * notices a dead node, say). Backs off as after {@link #storeFailed}, but the store is reachable: this ends
         * an outage rather than prolonging it, and the wait goes on until its deadline, which then ends it with
         * {@code failure}.
         */
        public static <L extends Lease> Step<L> storeStalled(LockBackendException failure) {
            return new Step<>(null, 0, false, Objects.requireNonNull(failure, "failure"), false);
        }
    }

    /** The first back-off after a store failure; it doubles with each failure in a row. */
    static final long FIRST_RETRY_MILLIS = 5;

    /** The longest back-off after store failures. */
    static final long LAST_RETRY_MILLIS = 1000;

    private static final long LAST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(LAST_RETRY_MILLIS);

    private final String key;
    private final Deadline deadline;
    private final Duration outageLimit;
    private final ScheduledExecutorService timers;
    private final WakeUps wakeUps;
    private final String wakeKey;
    private final Executor completion;
    private final CompletableFuture<Optional<L>> result = new CompletableFuture<>();
    private final CompletableFuture<Void> settled = new CompletableFuture<>();
    private WakeUps.Waiter waiter;

    // Guarded by this.
    private boolean inFlight;
    private boolean armed; // the timer is set
    private boolean wakeable; // ... and a wake-up cuts it short
    private boolean finished;
    private ScheduledFuture<?> timer;
    private long arming; // which timer is the live one
    private int failuresInARow;
    private Deadline outageEnds; // set at the first of failuresInARow

    /**
     * @param key the lock's key, for messages
     * @param deadline when to give up
     * @param outageLimit how long the store may fail every attempt before the acquisition ends with its failure
     *     (the backend's {@code connectTimeout})
     * @param timers runs the poll timers; rejecting a task (shut down) means the backend was closed
     * @param wakeUps the backend's registry of waiters
     * @param wakeKey the key this acquisition is woken by in {@code wakeUps}
     * @param completion completes {@link #result()}, so that a caller's continuation does not run on a client thread
     *     ({@code Runnable::run} to complete on whichever thread answered)
     */
    protected PollingAcquisition(
            String key,
            Deadline deadline,
            Duration outageLimit,
            ScheduledExecutorService timers,
            WakeUps wakeUps,
            String wakeKey,
            Executor completion) {
        this.key = key;
        this.deadline = deadline;
        this.outageLimit = Objects.requireNonNull(outageLimit, "outageLimit");
        this.timers = timers;
        this.wakeUps = wakeUps;
        this.wakeKey = wakeKey;
        this.completion = completion;
    }

    /**
     * One attempt, without blocking. A stage that fails ends the acquisition with that failure (after {@link
     * #withdraw}); answer {@link Step#backOff} or {@link Step#pollAfter} instead for a failure worth retrying.
     */
    protected abstract CompletionStage<Step<L>> attempt();

    /**
     * Removes what the attempts left in the store; called once when the acquisition ends without a grant. A stage
     * that fails is logged; what is left then runs out with its lease.
     */
    protected abstract CompletionStage<?> withdraw();

    /** Releases a grant that nobody can receive any more (the acquisition was cancelled meanwhile). */
    protected abstract CompletionStage<?> release(L lease);

    /** The lease, empty after the deadline, or the store's failure; cancel it to withdraw. */
    public final CompletableFuture<Optional<L>> result() {
        return result;
    }

    /** Completes when nothing of this acquisition is left in flight or in the store. */
    public final CompletableFuture<Void> settled() {
        return settled;
    }

    /** Registers for wake-ups (before the first attempt, so that no release in between is missed) and attempts. */
    public final PollingAcquisition<L> start() {
        int seen;
        synchronized (this) {
            waiter = wakeUps.register(wakeKey, this::onWake);
            inFlight = true;
            seen = waiter.signals();
        }
        result.whenComplete((v, e) -> {
            if (result.isCancelled()) {
                onCancel();
            }
        });
        send(seen);
        return this;
    }

    /**
     * Waits on the calling thread. When interrupted, withdraws (releasing a grant that won the race) and waits, at
     * most {@code cleanUpBound}, until that is done, so that nothing is left in the store when the {@link
     * InterruptedException} is thrown.
     */
    public final Optional<L> await(Duration cleanUpBound) throws InterruptedException {
        try {
            return result.get();
        } catch (InterruptedException e) {
            CompletableFuture<?> cleanUp = settled;
            if (!result.cancel(false) && !result.isCompletedExceptionally()) {
                Optional<L> late = result.getNow(Optional.empty());
                if (late.isPresent()) {
                    cleanUp = CompletableFuture.allOf(settled, releaseQuietly(late.get()));
                }
            }
            awaitQuietly(cleanUp, cleanUpBound);
            throw e;
        } catch (ExecutionException e) {
            throw failure(e.getCause());
        }
    }

    /** Attempts at once, as a release of the key would (for a backend that learned that its wake-ups were lost). */
    protected final void wakeUp() {
        waiter.wake();
    }

    private void send(int signalsBefore) {
        CompletionStage<Step<L>> step;
        try {
            step = Objects.requireNonNull(attempt(), "attempt() answered null");
        } catch (RuntimeException e) {
            step = CompletableFuture.failedFuture(e);
        }
        step.whenComplete((s, error) -> onAttempt(s, error, signalsBefore));
    }

    private void onAttempt(Step<L> step, Throwable error, int signalsBefore) {
        Runnable next;
        synchronized (this) {
            if (error == null && step.storeFailure == null) {
                failuresInARow = 0; // the store answered
            }
            if (error == null && !step.unreachable) {
                outageEnds = null; // reached: an outage, if any, is over
            }
            if (finished) {
                // cancelled while in flight: clean up after this attempt
                inFlight = false;
                next = error == null && step.lease != null
                        ? () -> releaseThenSettle(step.lease)
                        : this::withdrawThenSettle;
            } else if (error != null) {
                finishLocked();
                RuntimeException failure = failure(error);
                next = () -> end(r -> r.completeExceptionally(failure));
            } else if (step.lease != null) {
                finishLocked();
                next = () -> deliverGrant(step.lease);
            } else if (step.storeFailure != null && (outageOverLocked(step.unreachable) || deadline.hasPassed())) {
                finishLocked();
                LockBackendException failure = step.storeFailure;
                next = () -> end(r -> r.completeExceptionally(failure));
            } else if (deadline.hasPassed()) {
                finishLocked();
                next = () -> end(r -> r.complete(Optional.empty()));
            } else if (step.wakeOnRelease && waiter.signals() != signalsBefore) {
                // released while this attempt was in flight: attempt again at once
                int seen = waiter.signals();
                next = () -> send(seen);
            } else {
                long delay = step.storeFailure != null ? retryDelayLocked() : step.delayNanos;
                long wait = Math.max(0, deadline.remainingNanos(delay));
                inFlight = false;
                if (step.wakeOnRelease && keepsTimerLocked(wait)) {
                    armed = true;
                    wakeable = true;
                    return;
                }
                cancelTimerLocked();
                long generation = ++arming;
                try {
                    timer = timers.schedule(() -> onTimer(generation), wait, TimeUnit.NANOSECONDS);
                    armed = true;
                    wakeable = step.wakeOnRelease;
                    return;
                } catch (RejectedExecutionException closed) {
                    finishLocked();
                    next = () -> end(r -> r.completeExceptionally(
                            new LockBackendException("Could not acquire lock '" + key + "': the backend was closed")));
                }
            }
        }
        next.run();
    }

    /**
     * Guarded by this: counts a store failure; whether the store has now been unreachable at every attempt for the
     * outage limit.
     */
    private boolean outageOverLocked(boolean unreachable) {
        failuresInARow++;
        if (!unreachable) {
            return false;
        }
        if (outageEnds == null) {
            outageEnds = Deadline.after(outageLimit, deadline.ticker());
        }
        return outageEnds.hasPassed();
    }

    /**
     * Guarded by this: the back-off after the {@code failuresInARow}-th store failure in a row, with full jitter in
     * its upper half, and never past the outage's end (so that the last attempt falls inside the limit).
     */
    private long retryDelayLocked() {
        int doublings = Math.min(failuresInARow - 1, 20);
        long ceiling = Math.min(TimeUnit.MILLISECONDS.toNanos(FIRST_RETRY_MILLIS) << doublings, LAST_RETRY_NANOS);
        long delay = ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1);
        return outageEnds == null ? delay : Math.min(delay, Math.max(0, outageEnds.remainingNanos()));
    }

    private void onTimer(long generation) {
        int seen;
        synchronized (this) {
            if (finished || !armed || generation != arming) {
                return; // woken by a release meanwhile
            }
            timer = null; // it has fired
            seen = resendLocked();
        }
        send(seen);
    }

    /** Whether the wake-up sets this acquisition going: an attempt in flight sees the count change when it answers. */
    private boolean onWake() {
        int seen;
        synchronized (this) {
            if (finished || (armed && !wakeable)) {
                return false; // done, or backing off
            }
            if (!armed) {
                return true; // an attempt is in flight: it sees the count change and attempts again at once
            }
            seen = resendLocked();
        }
        send(seen);
        return true;
    }

    /**
     * Guarded by this: an attempt goes out. A poll timer cut short by a wake-up is left running: it fires into an
     * acquisition that is not armed (and does nothing then), or the next poll step takes it over ({@link
     * #keepsTimerLocked}).
     */
    private int resendLocked() {
        armed = false;
        inFlight = true;
        return waiter.signals();
    }

    /**
     * Guarded by this: whether the poll timer left running by a wake-up fires within {@code [wait / 2, wait]} from
     * now, so that it can serve as the timer of the next poll step. A waiter woken many times a second then sets a
     * timer every few hundred milliseconds instead of one per wake-up (each a hand-off to the timer thread, woken to
     * learn that its next task changed).
     */
    private boolean keepsTimerLocked(long wait) {
        if (timer == null || timer.isDone()) {
            return false;
        }
        long left = timer.getDelay(TimeUnit.NANOSECONDS);
        return left <= wait && left >= wait / 2;
    }

    /** Cancelled by the caller: stop, and let an attempt in flight clean up when it answers. */
    private void onCancel() {
        boolean idle;
        synchronized (this) {
            if (finished) {
                return;
            }
            idle = !inFlight;
            finished = true;
            disarmLocked();
        }
        waiter.close();
        if (idle) {
            withdrawThenSettle();
        }
    }

    /** Guarded by this. */
    private void finishLocked() {
        finished = true;
        inFlight = false;
        disarmLocked();
        waiter.close();
    }

    /** Guarded by this. */
    private void disarmLocked() {
        armed = false;
        cancelTimerLocked();
    }

    /** Guarded by this. */
    private void cancelTimerLocked() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void deliverGrant(L lease) {
        deliver(() -> {
            if (result.complete(Optional.of(lease))) {
                settled.complete(null);
            } else {
                releaseThenSettle(lease); // cancelled meanwhile: the grant is nobody's
            }
        });
    }

    /** Ends without a grant: withdraws first, so that nothing is left in the store when the result completes. */
    private void end(Consumer<CompletableFuture<Optional<L>>> outcome) {
        withdrawQuietly()
                .whenComplete((v, e) -> deliver(() -> {
                    try {
                        outcome.accept(result);
                    } finally {
                        settled.complete(null);
                    }
                }));
    }

    private void deliver(Runnable delivery) {
        try {
            completion.execute(delivery);
        } catch (RuntimeException rejected) {
            delivery.run();
        }
    }

    private void withdrawThenSettle() {
        withdrawQuietly().whenComplete((v, e) -> settled.complete(null));
    }

    private void releaseThenSettle(L lease) {
        releaseQuietly(lease).whenComplete((v, e) -> settled.complete(null));
    }

    private CompletableFuture<?> withdrawQuietly() {
        return quietly(this::withdraw, "Could not withdraw from lock '{}' ({}); what is left runs out with its lease");
    }

    private CompletableFuture<?> releaseQuietly(L lease) {
        return quietly(
                () -> release(lease),
                "Could not release lock '{}' granted after its wait was cancelled ({}); it runs out with its lease");
    }

    private CompletableFuture<?> quietly(Supplier<CompletionStage<?>> action, String warning) {
        CompletionStage<?> stage;
        try {
            stage = action.get();
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        return stage.handle((v, e) -> {
                    if (e != null) {
                        LOG.warn(warning, key, failure(e).getMessage());
                    }
                    return null;
                })
                .toCompletableFuture();
    }

    private static void awaitQuietly(CompletableFuture<?> cleanUp, Duration bound) {
        try {
            cleanUp.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // the clean-up goes on in the background; what is left runs out with its lease in any case
        }
    }

    /** The failure behind {@code error}, unwrapped from the futures' wrappers; a checked one is wrapped. */
    private RuntimeException failure(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new LockBackendException("Acquiring lock '" + key + "' failed: " + cause, cause);
    }
}
