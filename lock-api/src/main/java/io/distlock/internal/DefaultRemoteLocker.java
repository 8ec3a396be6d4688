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
import io.distlock.spi.LockRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
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
    /** Marks a lock taken by an asynchronous call: the re-entrancy check ignores it. */
    private static final long NO_THREAD = -1;
    /** How long close() waits for interrupted waiters to leave the backend before disconnecting it. */
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
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

    private final ReentrancyGuard guard = new ReentrancyGuard();
    private final ConcurrentHashMap<DefaultRemoteLock, Held> held = new ConcurrentHashMap<>();
    /** Leases given up by {@link RemoteLock#releaseAfter} whose entries are still to be deleted. */
    private final Set<Lease> delayedReleases = ConcurrentHashMap.newKeySet();
    /** Guards {@link #closed} against adoption and the registration of waiters. */
    private final Object lifecycle = new Object();

    private final Set<Waiter> waiters = new HashSet<>(); // guarded by lifecycle
    private volatile boolean closed;

    /** What the locker keeps about a held lock until it is released or lost. */
    private record Held(long threadId, LeaseKeeper.Tracking tracking) {}

    /** A call waiting for a lock: a thread blocked in the backend, or an asynchronous call. */
    private interface Waiter {
        /** The locker closed: end the wait at once with {@link LockerClosedException}. */
        void lockerClosed();
    }

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
        observing.lockerOpened(storeRequests);
    }

    /** How many timers the lease keeper set so far; for tests. */
    long timersSet() {
        return keeper.timersSet();
    }

    Ticker ticker() {
        return ticker;
    }

    Duration leaseTime() {
        return leaseTime;
    }

    Clock clock() {
        return clock;
    }

    LockBackend backend() {
        return backend;
    }

    Executor listenerExecutor() {
        return listenerExecutor;
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
        ensureOpen();
        long thread = Thread.currentThread().getId();
        guard.check(key, thread);
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
        ensureOpen();
        long thread = Thread.currentThread().getId();
        guard.check(key, thread);
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
        DefaultRemoteLock lock = new DefaultRemoteLock(this, key, OwnerIds.next(), fixedLease);
        BlockedThread waiter = enter(new BlockedThread(Thread.currentThread()));
        try {
            Optional<Lease> lease;
            try {
                lease = backend.tryAcquire(request(lock));
            } catch (RuntimeException e) {
                if (waiter.closedMeanwhile()) {
                    throw closedException();
                }
                throw backendFailure(key, "tryLock", e);
            }
            return lease.flatMap(l -> adopt(lock, l, thread, observed));
        } finally {
            leave(waiter);
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
            DefaultRemoteLock lock = new DefaultRemoteLock(this, key, OwnerIds.next(), fixedLease);
            BlockedThread waiter = enter(new BlockedThread(Thread.currentThread()));
            Optional<RemoteLock> adopted;
            try {
                Optional<Lease> lease;
                try {
                    lease = backend.acquire(request(lock), deadline);
                } catch (InterruptedException e) {
                    if (waiter.closedMeanwhile()) {
                        throw closedException();
                    }
                    throw e;
                } catch (RuntimeException e) {
                    if (waiter.closedMeanwhile()) {
                        throw closedException();
                    }
                    throw backendFailure(key, "lock", e);
                }
                if (lease.isEmpty()) {
                    return Optional.empty();
                }
                // adopted while still counted as a waiter: close() waits for it, so a racing grant is released
                // before the backend disconnects
                adopted = adopt(lock, lease.get(), thread, observed);
            } finally {
                leave(waiter);
            }
            if (adopted.isPresent() || deadline.hasPassed()) {
                return adopted;
            }
        }
    }

    private static InterruptedException interruptedBefore(String key) {
        return new InterruptedException("Lock '" + key + "' not taken: the calling thread was interrupted");
    }

    private LockRequest request(DefaultRemoteLock lock) {
        return new LockRequest(lock.key(), lock.ownerId(), lock.leaseTime(), lock::markLost);
    }

    /**
     * Turns a granted lease into a held lock. A grant that is already stale (its validity ran out before it reached
     * us) or was reported lost before it was handed over is released at once and gives empty; so is a grant that
     * races with {@link #close()}, which then throws {@link LockerClosedException}.
     */
    private Optional<RemoteLock> adopt(
            DefaultRemoteLock lock, Lease lease, long thread, Observing.Acquisition observed) {
        if (!lock.granted(lease) || lock.grantExpired()) {
            log.debug("Grant of lock '{}' to {} was stale or lost on arrival; released", lock.key(), lock.ownerId());
            lock.discard();
            releaseQuietly(lease);
            return Optional.empty();
        }
        synchronized (lifecycle) {
            if (closed) {
                lock.discard();
                releaseQuietly(lease);
                throw closedException();
            }
            lock.observedBy(observed.granted(lock)); // before renewals and losses can be reported
            held.put(lock, new Held(thread, keeper.track(lock)));
        }
        if (thread != NO_THREAD) {
            guard.register(lock.key(), thread, lock);
        }
        if (!lock.inHeldState()) {
            forget(lock, false); // lost between the grant and the bookkeeping: stop what was just started
            // The loss may have come before the hold was there to hear it; a hold hears of its end once
            lock.hold().lost(lock.lossReason());
        }
        log.debug("Acquired lock '{}' as {} (token {})", lock.key(), lock.ownerId(), lease.fencingToken());
        return Optional.of(lock);
    }

    /** Called by a lock leaving the held state: stops its renewal; a lost lease is also deleted if still there. */
    void forget(DefaultRemoteLock lock, boolean lost) {
        Held h = held.remove(lock);
        if (h != null) {
            h.tracking().stop();
            if (h.threadId() != NO_THREAD) {
                guard.unregister(lock.key(), h.threadId(), lock);
            }
        }
        if (lost) {
            // The store may still hold it (the renewal failed, not the store): free it, only if still ours.
            Lease lease = lock.lease();
            try {
                workers.execute(() -> releaseQuietly(lease));
            } catch (RejectedExecutionException closing) {
                releaseQuietly(lease);
            }
        }
    }

    /** {@link RemoteLock#extend}: false if the lock is no longer held through this locker. */
    boolean extend(DefaultRemoteLock lock, Duration leaseTime) {
        Held h = held.get(lock);
        try {
            return h != null && h.tracking().fix(leaseTime);
        } catch (RuntimeException e) {
            throw backendFailure(lock.key(), "extend", e);
        }
    }

    /**
     * {@link RemoteLock#releaseAfter} of a lock just given up by its handle: stops keeping it, sets the store's lease to
     * end after {@code delay} (TTL backends), and deletes the entry then.
     */
    ReleaseResult releaseAfter(DefaultRemoteLock lock, Duration delay) {
        Held h = held.remove(lock);
        if (h == null) {
            return ReleaseResult.ALREADY_RELEASED; // given up by close() meanwhile
        }
        if (h.threadId() != NO_THREAD) {
            guard.unregister(lock.key(), h.threadId(), lock);
        }
        Lease lease = lock.lease();
        boolean ours;
        try {
            ours = h.tracking().endAfter(delay);
        } catch (RuntimeException e) {
            deleteAfter(lease, delay); // the store keeps its previous lease, which may end later
            throw backendFailure(lock.key(), "releaseAfter", e);
        }
        if (!ours) {
            log.warn("Lock '{}' of owner {} was no longer held by the store when released", lock.key(), lock.ownerId());
            return ReleaseResult.ALREADY_LOST;
        }
        deleteAfter(lease, delay);
        return ReleaseResult.RELEASED;
    }

    /** Deletes the lease's entry {@code delay} from now, or when the locker closes (see {@link #close()}). */
    private void deleteAfter(Lease lease, Duration delay) {
        Runnable release = () -> {
            if (delayedReleases.remove(lease)) {
                releaseQuietly(lease);
            }
        };
        delayedReleases.add(lease);
        try {
            scheduler.schedule(() -> workers.execute(release), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closing) {
            release.run();
        }
    }

    private void releaseQuietly(Lease lease) {
        try {
            backend.release(lease);
        } catch (RuntimeException e) {
            log.debug("Could not free lease of '{}'; it runs out by itself: {}", lease.key(), e.toString());
        }
    }

    @Override
    public RemoteLockGroup lockAll(Collection<String> keys, Duration maxWait) throws InterruptedException {
        List<String> sorted = Checks.keys(keys);
        Checks.positive(maxWait, "maxWait");
        ensureOpen();
        long thread = Thread.currentThread().getId();
        for (String key : sorted) {
            guard.check(key, thread);
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
        ensureOpen();
        if (Thread.currentThread().isInterrupted()) {
            return CompletableFuture.failedFuture(interruptedBefore(key)); // the flag stays the caller's to handle
        }
        AsyncAcquisition acquisition = new AsyncAcquisition(key, Deadline.after(maxWait, ticker), maxWait);
        enter(acquisition);
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
    private final class AsyncAcquisition implements Waiter {
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
                leave(this);
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
            DefaultRemoteLock lock = new DefaultRemoteLock(DefaultRemoteLocker.this, key, OwnerIds.next(), RENEWED);
            CompletableFuture<Optional<Lease>> attempt;
            try {
                attempt = backend.acquireAsync(request(lock), deadline, workers);
            } catch (RuntimeException e) {
                result.completeExceptionally(backendFailure(key, "lockAsync", e));
                return;
            }
            inBackend = attempt;
            if (result.isDone()) {
                attempt.cancel(true); // cancelled or closed while starting
            }
            attempt.whenCompleteAsync((lease, failure) -> granted(lock, lease, failure), adopting);
        }

        private void granted(DefaultRemoteLock lock, Optional<Lease> lease, Throwable failure) {
            if (failure != null) {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                if (!(cause instanceof CancellationException)) {
                    result.completeExceptionally(
                            cause instanceof RuntimeException r
                                    ? backendFailure(key, "lockAsync", r)
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
                adopted = adopt(lock, lease.get(), NO_THREAD, observed);
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
            result.completeExceptionally(closedException());
        }
    }

    @Override
    public CompletableFuture<Optional<RemoteLock>> tryLockAsync(String key) {
        Checks.key(key);
        ensureOpen();
        CompletableFuture<Optional<RemoteLock>> result = new CompletableFuture<>();
        Waiter waiter = () -> result.completeExceptionally(closedException());
        enter(waiter);
        result.whenComplete((v, e) -> leave(waiter));
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
            result.completeExceptionally(closedException());
        }
        return result;
    }

    /** A thread blocked in the backend's {@code acquire}; closing the locker interrupts it. */
    private final class BlockedThread implements Waiter {
        private final Thread thread;
        private boolean inside = true; // guarded by this
        private boolean interrupted; // guarded by this

        BlockedThread(Thread thread) {
            this.thread = thread;
        }

        @Override
        public synchronized void lockerClosed() {
            if (inside) {
                interrupted = true;
                thread.interrupt();
            }
        }

        synchronized boolean closedMeanwhile() {
            return interrupted;
        }

        /** Leaves the backend; an interrupt of ours that the backend did not consume is taken back. */
        synchronized void left() {
            inside = false;
            if (interrupted) {
                Thread.interrupted();
            }
        }
    }

    private <W extends Waiter> W enter(W waiter) {
        synchronized (lifecycle) {
            if (closed) {
                throw closedException();
            }
            waiters.add(waiter);
        }
        return waiter;
    }

    private void leave(Waiter waiter) {
        if (waiter instanceof BlockedThread blocked) {
            blocked.left();
        }
        synchronized (lifecycle) {
            waiters.remove(waiter);
            lifecycle.notifyAll();
        }
    }

    @Override
    public Capabilities capabilities() {
        ensureOpen();
        return capabilities;
    }

    /**
     * Ends every wait with {@link LockerClosedException} (threads blocked in the backend are interrupted, asynchronous
     * attempts withdrawn), releases every lock still held, then disconnects. A grant that arrives during or after
     * this is released at once.
     */
    @Override
    public void close() {
        List<Waiter> waiting;
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            waiting = new ArrayList<>(waiters);
        }
        waiting.forEach(Waiter::lockerClosed);
        List<DefaultRemoteLock> still = new ArrayList<>(held.keySet());
        if (!still.isEmpty()) {
            log.info("Closing the {} locker: releasing {} lock(s) still held", backendName, still.size());
        }
        for (DefaultRemoteLock lock : still) {
            try {
                lock.release();
            } catch (RuntimeException e) {
                log.warn(
                        "Could not release lock '{}' on close; its lease runs out by itself: {}",
                        lock.key(),
                        e.toString());
            }
        }
        awaitWaitersGone();
        if (capabilities.leaseModel() == LeaseModel.SESSION) {
            // The session's end frees them anyway; delete them while the backend can still say so.
            new ArrayList<>(delayedReleases)
                    .stream().filter(delayedReleases::remove).forEach(this::releaseQuietly);
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

    /** Gives interrupted waiters a moment to leave the backend (and delete their queue entries) before it closes. */
    private void awaitWaitersGone() {
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

    private void ensureOpen() {
        if (closed) {
            throw closedException();
        }
    }

    private LockerClosedException closedException() {
        return new LockerClosedException(
                "This " + backendName + " locker is closed; open a new one with RemoteLockers.open(...)");
    }

    /**
     * One error model: distlock's own exceptions pass; anything else a backend let out (a client library's exception,
     * even one that is an {@link IllegalStateException} such as Curator's) becomes a {@link LockBackendException}.
     */
    private RuntimeException backendFailure(String key, String operation, RuntimeException e) {
        if (e instanceof io.distlock.LockException || e instanceof LockerClosedException) {
            return e;
        }
        return new LockBackendException(
                "The " + backendName + " store failed during " + operation + "('" + key + "'): " + e, e);
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
        return "RemoteLocker[" + backendName + (closed ? ", closed" : "") + "]";
    }
}
