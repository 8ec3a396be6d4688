package io.distlock.internal;

import io.distlock.LeaseModel;
import io.distlock.Ticker;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps held leases alive: for {@link LeaseModel#RENEWED_TTL} backends it renews each lease every third of the lease
 * time, or sooner when less than two thirds of the lease are left of its validity (a grant that reached the caller
 * late is renewed at once); for every backend it watches the lease's validity and marks the lock lost
 * when it runs out unrenewed (seed 000 section 5.3, with a third instead of a half so that one failed renewal still
 * leaves time for another). A failed renewal is tried again after a third of the lease or half the validity left,
 * whichever is sooner, so the tries thicken as the validity runs out.
 *
 * <p>The scheduler's one thread only keeps time: each renewal (a store round trip that may block up to the backend's
 * operation timeout) runs on the worker pool, so one slow or blocked renewal delays no other lock's renewal. A lock
 * has at most one renewal in flight; the next is scheduled when the previous one ended.
 */
final class LeaseKeeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    /** The shortest wait before a failed renewal is tried again: not a busy loop when the store fails at once. */
    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /**
     * How much later than the grant a held lock's deferred work is done, at most: its timers when they are due much
     * later (see {@link #track}), and the backend's {@link Lease#onStillHeld}. Each pass is a wake-up of the timer
     * thread; under a steady stream of grants there is one per this period per locker, whatever the rate.
     */
    static final Duration DEFERRAL = Duration.ofMillis(200);

    /** A lock whose first timer is due sooner than this gets its timers at once. */
    private static final long DEFERRED_WHEN_DUE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final LockBackend backend;
    private final LeaseModel model;
    private final Duration leaseTime;
    /** The validity left below which a lock whose renewals fail is at risk; empty: a third of its lease. */
    private final Optional<Duration> atRiskThreshold;

    private final Ticker ticker;
    private final ScheduledExecutorService scheduler;
    private final Executor workers;
    /** Locks granted since the last pass: their deferred timers not yet set, the backend not yet told. */
    private final DeferredBatches<Tracking> deferred;
    /** How many timers were set; for tests. */
    private final LongAdder timersSet = new LongAdder();

    LeaseKeeper(
            LockBackend backend,
            LeaseModel model,
            Duration leaseTime,
            Optional<Duration> atRiskThreshold,
            Ticker ticker,
            ScheduledExecutorService scheduler,
            Executor workers) {
        this.backend = backend;
        this.model = model;
        this.leaseTime = leaseTime;
        this.atRiskThreshold = atRiskThreshold;
        this.ticker = ticker;
        this.scheduler = scheduler;
        this.workers = workers;
        this.deferred = new DeferredBatches<>(scheduler, DEFERRAL, Tracking::stillHeld);
    }

    /**
     * Starts keeping {@code lock}; the returned handle stops it. When its first timer is due in more than {@link
     * #DEFERRED_WHEN_DUE_AFTER_NANOS}, its timers are set a little later ({@link #DEFERRAL}), together with those
     * of the other locks granted meanwhile, each for the same instant as now: most locks are released before that, and
     * never reach the timer thread. Setting a timer that becomes the scheduler's earliest wakes that thread, which
     * cost a context switch or two per acquisition, more than the rest of the locker's bookkeeping together. The same
     * pass tells the backend that the lock is still held ({@link Lease#onStillHeld}), so that a backend's own deferred
     * work wakes no thread of its own.
     */
    Tracking track(DefaultRemoteLock lock) {
        Tracking tracking = new Tracking(lock);
        if (tracking.firstTimerNanos() <= DEFERRED_WHEN_DUE_AFTER_NANOS) {
            tracking.start();
        }
        deferred.add(tracking);
        return tracking;
    }

    private long periodNanos() {
        return Math.max(1, leaseTime.toNanos() / 3);
    }

    /** How many timers were set so far, the deferred passes' among them; for tests. */
    long timersSet() {
        return timersSet.sum() + deferred.passesSet();
    }

    private ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        timersSet.increment();
        return scheduler.schedule(task, delay, unit);
    }

    /** A third of the lease, or sooner when less than two thirds of it are {@code left}. */
    private long renewalDelayNanos(long left) {
        return Math.min(periodNanos(), Math.max(0, left - 2 * periodNanos()));
    }

    /** The background work for one held lock. */
    final class Tracking {
        private final DefaultRemoteLock lock;
        /** The backend's lease, as granted. */
        private final Lease lease;
        /** Set on the granting thread before the tracking is handed to the deferred pass. */
        private boolean started;

        private volatile ScheduledFuture<?> renewal;
        private volatile ScheduledFuture<?> watchdog;
        private volatile boolean stopped;

        /** Guards the at-risk state below; never held across a store call or a listener. */
        private final Object riskMonitor = new Object();
        /** Whether the renewals (or the backend's keep-alive) fail now. */
        private boolean failing;
        /** Whether this failing episode was warned of. */
        private boolean warned;

        private ScheduledFuture<?> riskCheck;

        private Tracking(DefaultRemoteLock lock) {
            this.lock = lock;
            this.lease = lock.lease();
        }

        /** Sets the lock's timers, unless it is no longer kept. */
        private void start() {
            started = true;
            if (stopped) {
                return;
            }
            scheduleWatchdog();
            if (renewed()) {
                scheduleRenewal(false);
            }
        }

        /** The deferred pass: sets the timers not set at the grant and tells the backend, unless no longer kept. */
        private void stillHeld() {
            if (stopped) {
                return;
            }
            if (!started) {
                start();
            }
            lease.onStillHeld();
        }

        /** How long until the first of the lock's timers would fire if set now. */
        private long firstTimerNanos() {
            long left = lock.validUntilNanos() - ticker.read();
            return renewed() ? Math.min(left, renewalDelayNanos(left)) : left;
        }

        private boolean renewed() {
            return model == LeaseModel.RENEWED_TTL && !lock.fixed();
        }

        void stop() {
            stopped = true;
            cancelRenewal();
            synchronized (riskMonitor) {
                if (riskCheck != null) {
                    riskCheck.cancel(false);
                }
            }
            ScheduledFuture<?> w = watchdog;
            if (w != null) {
                w.cancel(false);
            }
        }

        private void scheduleRenewal(boolean afterFailure) {
            if (stopped) {
                return;
            }
            long left = lock.validUntilNanos() - ticker.read();
            long delay = afterFailure
                    ? Math.max(MIN_RETRY_NANOS, Math.min(periodNanos(), left / 2))
                    : renewalDelayNanos(left);
            try {
                renewal = schedule(this::startRenewal, delay, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                // the locker is closing
            }
        }

        private void startRenewal() {
            try {
                workers.execute(this::renew);
            } catch (RejectedExecutionException closing) {
                // the locker is closing
            }
        }

        /**
         * Makes the lock a fixed lease that ends {@code newLease} from now: asks a TTL store to set it (after any
         * renewal in flight), and moves the validity watchdog. False if the lock is no longer kept or the store no
         * longer holds it.
         */
        synchronized boolean fix(Duration newLease) {
            if (stopped) {
                return false;
            }
            long start = ticker.read();
            lock.fixUntil(lock.validUntilNanos()); // renews no more, also if the store cannot be told
            cancelRenewal();
            if (model == LeaseModel.RENEWED_TTL) {
                OptionalLong validUntil = backend.renew(lock.lease(), newLease);
                if (validUntil.isEmpty()) {
                    lock.markLost("the store no longer holds it for this owner (extension refused)");
                    return false;
                }
                lock.renewed(validUntil.getAsLong());
                lock.fixUntil(validUntil.getAsLong());
            } else {
                lock.fixUntil(start + newLease.toNanos());
            }
            scheduleWatchdog();
            return lock.isHeld();
        }

        /**
         * Stops keeping the lock, given up by {@link io.distlock.RemoteLock#releaseAfter}, and asks a TTL store to end
         * its entry {@code delay} from now (after any renewal in flight). False if the store no longer held it.
         */
        synchronized boolean endAfter(Duration delay) {
            stop();
            return model != LeaseModel.RENEWED_TTL
                    || backend.renew(lock.lease(), delay).isPresent();
        }

        private void cancelRenewal() {
            ScheduledFuture<?> r = renewal;
            if (r != null) {
                r.cancel(false);
            }
        }

        /** One renewal; synchronized so that {@link #fix} and {@link #endAfter} never race with one in flight. */
        private synchronized void renew() {
            boolean failed = false;
            long start = ticker.read();
            try {
                if (stopped || lock.fixed() || !lock.isHeld()) {
                    return; // isHeld() marked it lost if its validity ran out
                }
                // A renewal still unanswered after a third of the lease counts as failed (a store cut off)
                failing(true, periodNanos());
                OptionalLong validUntil = backend.renew(lock.lease(), lock.leaseTime());
                if (validUntil.isEmpty()) {
                    lock.markLost("the store no longer holds it for this owner (renewal refused)");
                    return;
                }
                lock.renewed(validUntil.getAsLong());
                lock.hold().renewed(Duration.ofNanos(ticker.read() - start));
                scheduleWatchdog();
                failing(false);
            } catch (RuntimeException e) {
                failed = true;
                lock.hold().renewalFailed(Duration.ofNanos(ticker.read() - start), e);
                log.warn("Renewing lock '{}' failed; retrying until its lease runs out: {}", lock.key(), e.toString());
            } finally {
                if (!lock.fixed()) {
                    scheduleRenewal(failed);
                }
            }
        }

        /**
         * The renewals (or the backend's keep-alive) fail, or work again. While they fail, a timer checks when the
         * validity left reaches the threshold and tells the lock it is at risk, once per episode; when they work again
         * after that, the lock is told it recovered. A renewal still unanswered a third of the lease after it
         * started counts as failing, so that one that hangs (a store cut off, the request waiting for its timeout)
         * warns as well.
         */
        void failing(boolean now) {
            failing(now, 0);
        }

        /** {@link #failing(boolean)}, the first check no sooner than {@code minDelayNanos} from now. */
        private void failing(boolean now, long minDelayNanos) {
            synchronized (riskMonitor) {
                if (stopped || now == failing) {
                    return;
                }
                failing = now;
                if (now) {
                    armRiskCheck(minDelayNanos);
                } else {
                    if (riskCheck != null) {
                        riskCheck.cancel(false);
                    }
                    if (warned) {
                        warned = false;
                        lock.recovered(); // under the monitor, so that it is handed over after the warning
                    }
                }
            }
        }

        private long thresholdNanos() {
            return atRiskThreshold
                    .map(Duration::toNanos)
                    .orElse(lock.leaseTime().toNanos() / 3);
        }

        /** Under the risk monitor: checks again when the validity left reaches the threshold. */
        private void armRiskCheck(long minDelayNanos) {
            long left = lock.validUntilNanos() - ticker.read();
            try {
                riskCheck = schedule(
                        this::checkRisk, Math.max(minDelayNanos, left - thresholdNanos()), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                // the locker is closing
            }
        }

        /** Runs on the scheduler: never blocks (the warning is handed to the listeners' executors). */
        private void checkRisk() {
            synchronized (riskMonitor) {
                if (stopped || !failing || warned || lock.fixed()) {
                    return;
                }
                long nanos = lock.validUntilNanos() - ticker.read();
                if (nanos <= 0) {
                    return; // the watchdog reports the loss
                }
                if (nanos > thresholdNanos()) {
                    armRiskCheck(0); // the validity moved on meanwhile
                    return;
                }
                warned = true;
                // Under the monitor, so that a recovery raised right after is handed over after it; the listeners'
                // executors run it, not this thread (unless a listener was given a direct executor)
                lock.atRisk(Duration.ofNanos(nanos));
            }
        }

        private void scheduleWatchdog() {
            if (stopped) {
                return;
            }
            long left = lock.validUntilNanos() - ticker.read();
            ScheduledFuture<?> previous = watchdog;
            try {
                watchdog = schedule(this::checkValidity, Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                return;
            }
            if (previous != null) {
                previous.cancel(false);
            }
        }

        /** Runs on the scheduler: never blocks (a loss is handed to the workers and the listeners' executors). */
        private void checkValidity() {
            if (stopped) {
                return;
            }
            if (lock.isHeld()) {
                scheduleWatchdog(); // renewed meanwhile, or a session lease that moves on by itself
            }
        }
    }
}
