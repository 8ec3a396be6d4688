package io.distlock.internal;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LockObserver;
import io.distlock.LockTimeoutException;
import io.distlock.LockedCall;
import io.distlock.LockedRun;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link RemoteLocker} implementation: the machinery shared by every backend (checks, owner ids, renewal,
 * loss, multi-key order and roll-back, re-entrancy, async) around a {@link LockBackend} that only speaks to its store.
 */
final class DefaultRemoteLocker implements RemoteLocker {

    private static final Logger log = LoggerFactory.getLogger(DefaultRemoteLocker.class);
    private static final AtomicInteger LOCKERS = new AtomicInteger();
    private static final long NO_THREAD = HeldLocks.NO_THREAD;
    /** A lock renewed for as long as it is held (not a fixed lease). */
    private static final Optional<Duration> RENEWED = Optional.empty();

    private final String backendName;
    private final LockBackend backend;
    private final Capabilities capabilities;
    private final Duration leaseTime;
    private final Ticker ticker;
    private final Clock clock;
    /** Keeps time only (renewal and validity timers); never blocks. */
    private final ScheduledThreadPoolExecutor scheduler;
    /** Blocking work: renewals, clean-up releases, the backend's blocking asynchronous acquisitions, tryLockAsync. */
    private final ExecutorService workers;
    /** Where asynchronous grants are adopted: the workers, or the granting thread once they are shut down. */
    private final Executor adopting;

    private final Executor listenerExecutor;
    private final Optional<ExecutorService> ownListenerExecutor;
    private final LeaseKeeper keeper;
    private final Observing observing;
    /** The backend's request count as the observer was given it, at the opening and again at the close. */
    private final Optional<LongSupplier> storeRequests;

    private final LockerFailures failures;
    private final Waiters waiters;
    private final HeldLocks held;

    DefaultRemoteLocker(
            String backendName,
            LockBackend backend,
            Duration leaseTime,
            Ticker ticker,
            Clock clock,
            Optional<Executor> listenerExecutor,
            Observing observing) {
        this.backendName = backendName;
        this.observing = observing;
        this.backend = backend;
        this.capabilities = backend.capabilities();
        this.leaseTime = leaseTime;
        this.ticker = ticker;
        this.clock = clock;
        int n = LOCKERS.incrementAndGet();
        String prefix = "distlock-" + backendName + "-" + n;
        this.scheduler = new ScheduledThreadPoolExecutor(1, daemon(prefix + "-timer"));
        // Every release cancels its lock's renewal and watchdog: drop them from the queue at once.
        scheduler.setRemoveOnCancelPolicy(true);
        this.workers = Executors.newCachedThreadPool(daemon(prefix + "-worker"));
        this.adopting = task -> {
            try {
                workers.execute(task);
            } catch (RejectedExecutionException closing) {
                task.run(); // a grant after close() is still released at once
            }
        };
        this.ownListenerExecutor = listenerExecutor.isPresent()
                ? Optional.empty()
                : Optional.of(Executors.newSingleThreadExecutor(daemon(prefix + "-listener")));
        this.listenerExecutor = listenerExecutor.orElseGet(ownListenerExecutor::orElseThrow);
        this.keeper = new LeaseKeeper(backend, capabilities.leaseModel(), leaseTime, ticker, scheduler, workers);
        this.storeRequests = backend.storeRequests().isPresent()
                ? Optional.of(() -> backend.storeRequests().orElse(0))
                : Optional.empty();
        this.failures = new LockerFailures(backendName);
        this.waiters = new Waiters(backendName, failures);
        this.held = new HeldLocks(
                backend, keeper, ticker, clock, this.listenerExecutor, scheduler, workers, waiters, failures);
        observing.lockerOpened(storeRequests);
    }

    /** How many timers the lease keeper set so far; for tests. */
    long timersSet() {
        return keeper.timersSet();
    }

    @Override
    public RemoteLock lock(String key) throws InterruptedException {
        return lockUntil(Checks.key(key), Deadline.unbounded(ticker), RENEWED);
    }

    @Override
    public RemoteLock lock(String key, Duration maxWait) throws InterruptedException {
        Checks.key(key);
        Checks.positive(maxWait, "maxWait");
        return lockUntil(key, Deadline.after(maxWait, ticker), RENEWED);
    }

    @Override
    public RemoteLock lockFor(String key, Duration leaseTime) throws InterruptedException {
        Checks.key(key);
        Checks.positive(leaseTime, "leaseTime");
        return lockUntil(key, Deadline.unbounded(ticker), Optional.of(leaseTime));
    }

    @Override
    public RemoteLock lockFor(String key, Duration leaseTime, Duration maxWait) throws InterruptedException {
        Checks.key(key);
        Checks.positive(leaseTime, "leaseTime");
        Checks.positive(maxWait, "maxWait");
        return lockUntil(key, Deadline.after(maxWait, ticker), Optional.of(leaseTime));
    }

    private RemoteLock lockUntil(String key, Deadline deadline, Optional<Duration> fixedLease)
            throws InterruptedException {
        waiters.ensureOpen();
        long thread = Thread.currentThread().getId();
        held.refuseReentry(key, thread);
        return acquire(key, deadline, thread, fixedLease)
                .orElseThrow(
                        () -> new LockTimeoutException(key, deadline.maxWait().orElseThrow()));
    }

    @Override
    public Optional<RemoteLock> tryLock(String key) {
        return tryLock(key, RENEWED);
    }

    @Override
    public Optional<RemoteLock> tryLockFor(String key, Duration leaseTime) {
        Checks.positive(leaseTime, "leaseTime");
        return tryLock(key, Optional.of(leaseTime));
    }

    private Optional<RemoteLock> tryLock(String key, Optional<Duration> fixedLease) {
        Checks.key(key);
        waiters.ensureOpen();
        long thread = Thread.currentThread().getId();
        held.refuseReentry(key, thread);
        return attempt(key, thread, fixedLease);
    }

    /**
     * One attempt; a stale grant (or one lost before it was handed over) is released and counts as not granted. The
     * attempt counts as a waiter until adopted, so that {@link #close()} interrupts it and waits for it to leave.
     */
    private Optional<RemoteLock> attempt(String key, long thread, Optional<Duration> fixedLease) {
        Observing.Acquisition observed = observing.started(key, LockObserver.Kind.TRY_LOCK);
        try {
            Optional<RemoteLock> lock = attemptObserved(key, thread, fixedLease, observed);
            if (lock.isEmpty()) {
                observed.ended(LockObserver.Outcome.BUSY, null);
            }
            return lock;
        } catch (RuntimeException e) {
            observed.ended(outcomeOf(e), e);
            throw e;
        }
    }

    private Optional<RemoteLock> attemptObserved(
            String key, long thread, Optional<Duration> fixedLease, Observing.Acquisition observed) {
        PendingGrant grant = new PendingGrant(key, fixedLease.orElse(leaseTime), fixedLease.isPresent());
        Waiters.BlockedThread waiter = waiters.enterBlocked();
        try {
            Optional<Lease> lease;
            try {
                lease = backend.tryAcquire(grant.request());
            } catch (RuntimeException e) {
                if (waiter.closedMeanwhile()) {
                    throw failures.closed();
                }
                throw failures.backend(key, "tryLock", e);
            }
            return lease.flatMap(l -> held.adopt(grant, l, thread, observed));
        } finally {
            waiters.leave(waiter);
        }
    }

    /** How a failure the caller is given ends an observed acquisition. */
    private static LockObserver.Outcome outcomeOf(Throwable failure) {
        if (failure instanceof LockerClosedException) {
            return LockObserver.Outcome.CLOSED;
        }
        if (failure instanceof LockTimeoutException) {
            return LockObserver.Outcome.TIMED_OUT;
        }
        if (failure instanceof InterruptedException || failure instanceof CancellationException) {
            return LockObserver.Outcome.INTERRUPTED;
        }
        return LockObserver.Outcome.FAILED;
    }

    /**
     * Acquires through the backend on the calling thread and adopts the lease; a stale grant is released and the
     * wait goes on. Empty when the deadline passed.
     */
    private Optional<RemoteLock> acquire(String key, Deadline deadline, long thread, Optional<Duration> fixedLease)
            throws InterruptedException {
        Observing.Acquisition observed = observing.started(key, LockObserver.Kind.LOCK);
        try {
            if (Thread.interrupted()) {
                // java.util.concurrent's convention: an interrupted caller is not served, even when the key is free
                throw interruptedBefore(key);
            }
            Optional<RemoteLock> lock = acquireObserved(key, deadline, thread, fixedLease, observed);
            if (lock.isEmpty()) {
                // empty only when the deadline passed, so it has a wait: what the caller is given next
                observed.ended(
                        LockObserver.Outcome.TIMED_OUT,
                        new LockTimeoutException(key, deadline.maxWait().orElseThrow()));
            }
            return lock;
        } catch (InterruptedException | RuntimeException e) {
            observed.ended(outcomeOf(e), e);
            throw e;
        }
    }

    private Optional<RemoteLock> acquireObserved(
            String key, Deadline deadline, long thread, Optional<Duration> fixedLease, Observing.Acquisition observed)
            throws InterruptedException {
        while (true) {
            PendingGrant grant = new PendingGrant(key, fixedLease.orElse(leaseTime), fixedLease.isPresent());
            Waiters.BlockedThread waiter = waiters.enterBlocked();
            Optional<RemoteLock> adopted;
            try {
                Optional<Lease> lease;
                try {
                    lease = backend.acquire(grant.request(), deadline);
                } catch (InterruptedException e) {
                    if (waiter.closedMeanwhile()) {
                        throw failures.closed();
                    }
                    throw e;
                } catch (RuntimeException e) {
                    if (waiter.closedMeanwhile()) {
                        throw failures.closed();
                    }
                    throw failures.backend(key, "lock", e);
                }
                if (lease.isEmpty()) {
                    return Optional.empty();
                }
                // adopted while still counted as a waiter: close() waits for it, so a racing grant is released
                // before the backend disconnects
                adopted = held.adopt(grant, lease.get(), thread, observed);
            } finally {
                waiters.leave(waiter);
            }
            if (adopted.isPresent() || deadline.hasPassed()) {
                return adopted;
            }
        }
    }

    private static InterruptedException interruptedBefore(String key) {
        return new InterruptedException("Lock '" + key + "' not taken: the calling thread was interrupted");
    }

    @Override
    public RemoteLockGroup lockAll(Collection<String> keys, Duration maxWait) throws InterruptedException {
        List<String> sorted = Checks.keys(keys);
        Checks.positive(maxWait, "maxWait");
        waiters.ensureOpen();
        long thread = Thread.currentThread().getId();
        for (String key : sorted) {
            held.refuseReentry(key, thread);
        }
        Deadline deadline = Deadline.after(maxWait, ticker);
        List<RemoteLock> taken = new ArrayList<>(sorted.size());
        boolean complete = false;
        try {
            for (String key : sorted) {
                // Seeds 001 and 003: one global order, so overlapping sets cannot wait on each other in a cycle.
                Optional<RemoteLock> lock = acquire(key, deadline, thread, RENEWED);
                if (lock.isEmpty()) {
                    throw new LockTimeoutException(key, maxWait);
                }
                taken.add(lock.get());
            }
            // A lock taken first can be lost while a later one is awaited (its renewals failed through an outage):
            // the group would not be one of held locks.
            for (RemoteLock lock : taken) {
                if (!lock.isHeld()) {
                    throw new LockBackendException("Could not take the locks on " + sorted + ": the lock on '"
                            + lock.key() + "' was lost before the last one was granted; none is left held");
                }
            }
            complete = true;
            return new DefaultLockGroup(taken, listenerExecutor);
        } finally {
            if (!complete) {
                DefaultLockGroup.releaseInReverse(taken);
            }
        }
    }

    @Override
    public <T, X extends Exception> T withLock(String key, Duration maxWait, LockedCall<T, X> action)
            throws X, InterruptedException {
        RemoteLock lock = lock(key, maxWait);
        return runHolding(List.of(lock), action);
    }

    @Override
    public <X extends Exception> void withLock(String key, Duration maxWait, LockedRun<X> action)
            throws X, InterruptedException {
        withLock(key, maxWait, asCall(action));
    }

    @Override
    public <T, X extends Exception> T withLocks(Collection<String> keys, Duration maxWait, LockedCall<T, X> action)
            throws X, InterruptedException {
        RemoteLockGroup group = lockAll(keys, maxWait);
        return runHolding(group.locks(), action);
    }

    @Override
    public <X extends Exception> void withLocks(Collection<String> keys, Duration maxWait, LockedRun<X> action)
            throws X, InterruptedException {
        withLocks(keys, maxWait, asCall(action));
    }

    private static <X extends Exception> LockedCall<Void, X> asCall(LockedRun<X> action) {
        return () -> {
            action.run();
            return null;
        };
    }

    /**
     * Seed 003's {@code try ... after}: runs the action, always releases, and reports a lease lost meanwhile: as a
     * {@link LockLostException} when the action succeeded, as one suppressed by the action's own failure otherwise.
     */
    private static <T, X extends Exception> T runHolding(List<RemoteLock> locks, LockedCall<T, X> action) throws X {
        T result;
        try {
            result = action.call();
        } catch (Throwable failure) {
            List<String> lost = new ArrayList<>();
            RuntimeException releaseFailure = releaseAll(locks, lost);
            if (!lost.isEmpty()) {
                failure.addSuppressed(new LockLostException(lost.get(0)));
            }
            if (releaseFailure != null) {
                failure.addSuppressed(releaseFailure);
            }
            throw failure;
        }
        List<String> lost = new ArrayList<>();
        RuntimeException releaseFailure = releaseAll(locks, lost);
        if (!lost.isEmpty()) {
            LockLostException e = new LockLostException(lost.get(0));
            if (releaseFailure != null) {
                e.addSuppressed(releaseFailure);
            }
            throw e;
        }
        if (releaseFailure != null) {
            throw releaseFailure;
        }
        return result;
    }

    /** Releases last-first, adding the keys found lost to {@code lost}; returns the first failure, rest suppressed. */
    private static RuntimeException releaseAll(List<RemoteLock> locks, List<String> lost) {
        RuntimeException releaseFailure = null;
        for (int i = locks.size() - 1; i >= 0; i--) {
            try {
                if (locks.get(i).release() == ReleaseResult.ALREADY_LOST) {
                    lost.add(locks.get(i).key());
                }
            } catch (RuntimeException e) {
                if (releaseFailure == null) {
                    releaseFailure = e;
                } else {
                    releaseFailure.addSuppressed(e);
                }
            }
        }
        return releaseFailure;
    }

    @Override
    public CompletableFuture<RemoteLock> lockAsync(String key, Duration maxWait) {
        Checks.key(key);
        Checks.positive(maxWait, "maxWait");
        waiters.ensureOpen();
        if (Thread.currentThread().isInterrupted()) {
            return CompletableFuture.failedFuture(interruptedBefore(key)); // the flag stays the caller's to handle
        }
        AsyncAcquisition acquisition = new AsyncAcquisition(key, Deadline.after(maxWait, ticker), maxWait);
        waiters.enter(acquisition);
        Observing.Acquisition observed = observing.started(key, LockObserver.Kind.LOCK);
        acquisition.result.whenComplete((lock, failure) -> {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                observed.ended(outcomeOf(cause), cause); // a no-op after a grant that raced with a cancel
            }
        });
        acquisition.start(observed);
        return acquisition.result;
    }

    /**
     * One {@link #lockAsync} call: the backend's asynchronous acquisition (no thread held while waiting where the
     * backend implements it natively), adopted on a worker thread so that a chain of hand-overs never runs on the
     * granting thread's stack. A stale grant is released and the wait goes on until the deadline.
     */
    private final class AsyncAcquisition implements Waiters.Waiter {
        private final String key;
        private final Deadline deadline;
        private final Duration maxWait;
        private final CompletableFuture<RemoteLock> result = new CompletableFuture<>();
        private volatile CompletableFuture<Optional<Lease>> inBackend;

        AsyncAcquisition(String key, Deadline deadline, Duration maxWait) {
            this.key = key;
            this.deadline = deadline;
            this.maxWait = maxWait;
            result.whenComplete((v, e) -> {
                waiters.leave(this);
                CompletableFuture<Optional<Lease>> attempt = inBackend;
                if (attempt != null) {
                    attempt.cancel(true); // cancelled or closed: withdraws the waiter (a no-op once granted)
                }
            });
        }

        private Observing.Acquisition observed;

        void start(Observing.Acquisition observed) {
            this.observed = observed;
            start();
        }

        private void start() {
            PendingGrant grant = new PendingGrant(key, leaseTime, false);
            CompletableFuture<Optional<Lease>> attempt;
            try {
                attempt = backend.acquireAsync(grant.request(), deadline, workers);
            } catch (RuntimeException e) {
                result.completeExceptionally(failures.backend(key, "lockAsync", e));
                return;
            }
            inBackend = attempt;
            if (result.isDone()) {
                attempt.cancel(true); // cancelled or closed while starting
            }
            attempt.whenCompleteAsync((lease, failure) -> granted(grant, lease, failure), adopting);
        }

        private void granted(PendingGrant grant, Optional<Lease> lease, Throwable failure) {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                if (!(cause instanceof CancellationException)) {
                    result.completeExceptionally(
                            cause instanceof RuntimeException r
                                    ? failures.backend(key, "lockAsync", r)
                                    : new LockBackendException("lockAsync('" + key + "') failed: " + cause, cause));
                }
                return;
            }
            if (lease.isEmpty()) {
                result.completeExceptionally(new LockTimeoutException(key, maxWait));
                return;
            }
            Optional<RemoteLock> adopted;
            try {
                adopted = held.adopt(grant, lease.get(), NO_THREAD, observed);
            } catch (RuntimeException closedMeanwhile) {
                result.completeExceptionally(closedMeanwhile);
                return;
            }
            if (adopted.isPresent()) {
                if (!result.complete(adopted.get())) {
                    adopted.get().release(); // cancelled meanwhile: nobody can receive it
                }
            } else if (deadline.hasPassed()) {
                result.completeExceptionally(new LockTimeoutException(key, maxWait));
            } else if (!result.isDone()) {
                start(); // the grant was stale: wait again
            }
        }

        @Override
        public void lockerClosed() {
            result.completeExceptionally(failures.closed());
        }
    }

    @Override
    public CompletableFuture<Optional<RemoteLock>> tryLockAsync(String key) {
        Checks.key(key);
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
                    Optional<RemoteLock> lock = attempt(key, NO_THREAD, RENEWED);
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

    @Override
    public Capabilities capabilities() {
        waiters.ensureOpen();
        return capabilities;
    }

    /**
     * Ends every wait with {@link LockerClosedException} (threads blocked in the backend are interrupted, asynchronous
     * attempts withdrawn), releases every lock still held, then disconnects. A grant that arrives during or after
     * this is released at once.
     */
    @Override
    public void close() {
        if (!waiters.close()) {
            return;
        }
        held.releaseAll(backendName);
        waiters.awaitGone();
        if (capabilities.leaseModel() == LeaseModel.SESSION) {
            // The session's end frees them anyway; delete them while the backend can still say so.
            held.deleteDeferredNow();
        }
        scheduler.shutdownNow();
        workers.shutdownNow();
        ownListenerExecutor.ifPresent(ExecutorService::shutdown);
        try {
            backend.close();
        } finally {
            observing.lockerClosed(storeRequests);
        }
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public String toString() {
        return "RemoteLocker[" + backendName + (waiters.closed() ? ", closed" : "") + "]";
    }
}
