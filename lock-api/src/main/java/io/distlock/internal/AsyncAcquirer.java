package io.distlock.internal;

import io.distlock.LockBackendException;
import io.distlock.LockObserver;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The asynchronous acquisition paths, written once for every {@link RequestKind}: {@link #lockAsync} through the
 * backend's asynchronous acquisition (no thread held while waiting where the backend implements it natively), {@link
 * #tryLockAsync} as one {@link Acquirer#attempt} on a worker thread. Each pending call counts as a waiter of the
 * {@link Waiters} until its future completes, so that closing the locker fails it with {@link
 * io.distlock.LockerClosedException}; a grant is adopted by the {@link HeldLocks}, and one that nobody can receive
 * any more (the future was cancelled or the locker closed) is released. Called by the locker's {@code lockAsync} and
 * {@code tryLockAsync}.
 */
final class AsyncAcquirer {

    private final LockBackend backend;
    private final Acquirer acquirer;
    private final HeldLocks held;
    private final Waiters waiters;
    private final Observing observing;
    private final LockerFailures failures;
    private final Ticker ticker;
    /**
     * The locker's workers: tryLockAsync's attempts run here, and through the two views below a backend's blocking
     * tasks and the adoption of grants.
     */
    private final Executor workers;
    /** The workers as the backend's blocking executor: a grant completed by one of its tasks is adopted there. */
    private final Executor backendTasks;
    /** Where asynchronous grants are adopted: the workers, or the granting thread once they are shut down. */
    private final Executor adopting;

    AsyncAcquirer(
            LockBackend backend,
            Acquirer acquirer,
            HeldLocks held,
            Waiters waiters,
            Observing observing,
            LockerFailures failures,
            Ticker ticker,
            Executor workers) {
        this.backend = backend;
        this.acquirer = acquirer;
        this.held = held;
        this.waiters = waiters;
        this.observing = observing;
        this.failures = failures;
        this.ticker = ticker;
        this.workers = workers;
        this.backendTasks = WorkerThread.backendTasks(workers);
        this.adopting = task -> {
            try {
                workers.execute(task);
            } catch (RejectedExecutionException closing) {
                task.run(); // a grant after the close is still released at once
            }
        };
    }

    /**
     * {@code lockAsync}: waits for {@code ask} for at most {@code maxWait} without holding the calling thread. A caller
     * already interrupted gets a future failed with {@link InterruptedException} (its flag stays set).
     */
    CompletableFuture<RemoteLock> lockAsync(Ask ask, Duration maxWait) {
        return lockAsync(ask, Deadline.after(maxWait, ticker));
    }

    /**
     * Waits for {@code ask} without a deadline, until it is granted, the future is cancelled or the locker closes: for
     * an election's candidate, which would lose its place in a fair queue if its wait ended and were asked for again.
     */
    CompletableFuture<RemoteLock> lockAsyncWithoutDeadline(Ask ask) {
        return lockAsync(ask, Deadline.unbounded(ticker));
    }

    private CompletableFuture<RemoteLock> lockAsync(Ask ask, Deadline deadline) {
        waiters.ensureOpen();
        if (Thread.currentThread().isInterrupted()) {
            // the flag stays the caller's to handle
            return CompletableFuture.failedFuture(Acquirer.interruptedBefore(ask.key()));
        }
        Call call = new Call(ask, deadline);
        waiters.enter(call);
        Observing.Acquisition observed = observing.started(ask.key(), LockObserver.Kind.LOCK, ask.lockKind());
        call.result.whenComplete((lock, failure) -> {
            if (failure != null) {
                Throwable cause = unwrap(failure);
                observed.ended(Observing.outcomeOf(cause), cause); // a no-op after a grant that raced with a cancel
            }
        });
        call.start(observed);
        return call.result;
    }

    /** {@code tryLockAsync}: one attempt at {@code ask} on a worker thread; empty when the key is taken. */
    CompletableFuture<Optional<RemoteLock>> tryLockAsync(Ask ask) {
        waiters.ensureOpen();
        CompletableFuture<Optional<RemoteLock>> result = new CompletableFuture<>();
        Waiters.Waiter waiter = () -> result.completeExceptionally(failures.closed());
        waiters.enter(waiter);
        result.whenComplete((v, e) -> waiters.leave(waiter));
        try {
            workers.execute(() -> {
                if (result.isDone()) {
                    return;
                }
                try {
                    Optional<RemoteLock> lock = acquirer.attempt(ask, HeldLocks.NO_THREAD);
                    if (!result.complete(lock)) {
                        lock.ifPresent(RemoteLock::release); // cancelled or closed meanwhile
                    }
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException closing) {
            result.completeExceptionally(failures.closed());
        }
        return result;
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * One {@link #lockAsync} call, adopted on a worker thread so that a chain of hand-overs never runs on the granting
     * thread's stack: on the worker whose backend task completed the grant (see {@link WorkerThread}), else handed to
     * one. A stale grant is released and the wait goes on until the deadline.
     */
    private final class Call implements Waiters.Waiter {
        private final Ask ask;
        private final Deadline deadline;
        private final CompletableFuture<RemoteLock> result = new CompletableFuture<>();
        private volatile CompletableFuture<Optional<Lease>> inBackend;
        private Observing.Acquisition observed;

        Call(Ask ask, Deadline deadline) {
            this.ask = ask;
            this.deadline = deadline;
            result.whenComplete((v, e) -> {
                waiters.leave(this);
                CompletableFuture<Optional<Lease>> attempt = inBackend;
                if (attempt != null) {
                    attempt.cancel(true); // cancelled or closed: withdraws the waiter (a no-op once granted)
                }
            });
        }

        void start(Observing.Acquisition observed) {
            this.observed = observed;
            start();
        }

        private void start() {
            PendingGrant grant = acquirer.nextTry(ask);
            CompletableFuture<Optional<Lease>> attempt;
            try {
                attempt = ask.kind().acquireAsync(backend, grant.request(), deadline, backendTasks);
            } catch (RuntimeException e) {
                result.completeExceptionally(failures.backend(ask.key(), "lockAsync", e));
                return;
            }
            inBackend = attempt;
            if (result.isDone()) {
                attempt.cancel(true); // cancelled or closed while starting
            }
            attempt.whenComplete((lease, failure) -> {
                if (failure == null && lease.isPresent() && WorkerThread.takeBackendTask()) {
                    granted(grant, lease, failure); // granted by a backend's task on a worker: adopted there
                } else {
                    adopting.execute(() -> granted(grant, lease, failure));
                }
            });
        }

        private void granted(PendingGrant grant, Optional<Lease> lease, Throwable failure) {
            String key = ask.key();
            if (failure != null) {
                Throwable cause = unwrap(failure);
                if (!(cause instanceof CancellationException)) {
                    result.completeExceptionally(
                            cause instanceof RuntimeException r
                                    ? failures.backend(key, "lockAsync", r)
                                    : new LockBackendException("lockAsync('" + key + "') failed: " + cause, cause));
                }
                return;
            }
            if (lease.isEmpty()) {
                result.completeExceptionally(timedOut(key));
                return;
            }
            Optional<RemoteLock> adopted;
            try {
                adopted = held.adopt(grant, lease.get(), HeldLocks.NO_THREAD, observed);
            } catch (RuntimeException closedMeanwhile) {
                result.completeExceptionally(closedMeanwhile);
                return;
            }
            if (adopted.isPresent()) {
                if (!result.complete(adopted.get())) {
                    adopted.get().release(); // cancelled meanwhile: nobody can receive it
                }
            } else if (deadline.hasPassed()) {
                result.completeExceptionally(timedOut(key));
            } else if (!result.isDone()) {
                start(); // the grant was stale: wait again
            }
        }

        /** The wait ended without a grant: its deadline passed, or a backend gave up a wait that had none. */
        private RuntimeException timedOut(String key) {
            return deadline.maxWait()
                    .<RuntimeException>map(maxWait -> new LockTimeoutException(key, maxWait))
                    .orElseGet(() -> new LockBackendException("lockAsync('" + key
                            + "') without a deadline ended without a grant: the backend gave up the wait"));
        }

        @Override
        public void lockerClosed() {
            result.completeExceptionally(failures.closed());
        }
    }
}
