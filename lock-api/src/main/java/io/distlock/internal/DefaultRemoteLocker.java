package io.distlock.internal;

import io.distlock.Capabilities;
import io.distlock.Capabilities.Operation;
import io.distlock.LeaderElection;
import io.distlock.LeaseModel;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.LockedCall;
import io.distlock.LockedRun;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.RemoteReadWriteLock;
import io.distlock.RemoteSemaphore;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockBackend;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The one {@link RemoteLocker} implementation, a facade over a {@link LockBackend} that only speaks to its store: it
 * checks the arguments, says what each call asks for (an {@link Ask}) and delegates. The machinery shared by every
 * backend is in its parts: {@link Acquirer} (lock, tryLock), {@link AsyncAcquirer} (lockAsync, tryLockAsync), {@link
 * MultiKeyLocking} (lockAll, withLock, withLocks), {@link HeldLocks} (a held lock's life: renewal through the {@link
 * LeaseKeeper}, loss, extend, release, re-entrancy), {@link Waiters} (close-safety). The locker owns the threads they
 * share and orders the close. Built by {@link LockerFactory}.
 */
final class DefaultRemoteLocker implements RemoteLocker {

    private static final AtomicInteger LOCKERS = new AtomicInteger();
    /** A lock renewed for as long as it is held (not a fixed lease). */
    private static final Optional<Duration> RENEWED = Optional.empty();

    private final String backendName;
    private final String ownerLabel;
    private final LockBackend backend;
    private final Capabilities capabilities;
    private final Duration leaseTime;
    private final Ticker ticker;
    /** Keeps time only (renewal and validity timers); never blocks. */
    private final ScheduledThreadPoolExecutor scheduler;
    /** Blocking work: renewals, clean-up releases, the backend's blocking asynchronous acquisitions, tryLockAsync. */
    private final ExecutorService workers;

    private final Optional<ExecutorService> ownListenerExecutor;
    private final LeaseKeeper keeper;
    private final Observing observing;
    /** The backend's request count as the observer was given it, at the opening and again at the close. */
    private final Optional<LongSupplier> storeRequests;

    private final Waiters waiters;
    private final HeldLocks held;
    private final Acquirer acquirer;
    private final AsyncAcquirer async;
    private final MultiKeyLocking multiKey;
    private final DefaultLockable.Paths paths;
    private final Elections elections;

    DefaultRemoteLocker(
            String backendName,
            LockBackend backend,
            Duration leaseTime,
            Ticker ticker,
            Clock clock,
            Optional<Executor> listenerExecutor,
            Observing observing,
            String ownerLabel,
            Optional<Duration> atRiskThreshold,
            Duration lockDelay) {
        this.backendName = backendName;
        this.ownerLabel = ownerLabel;
        this.observing = observing;
        this.backend = backend;
        this.capabilities = backend.capabilities();
        this.leaseTime = leaseTime;
        this.ticker = ticker;
        int n = LOCKERS.incrementAndGet();
        String prefix = "distlock-" + backendName + "-" + n;
        this.scheduler = new ScheduledThreadPoolExecutor(1, daemon(prefix + "-timer"));
        // Every release cancels its lock's renewal and watchdog: drop them from the queue at once.
        scheduler.setRemoveOnCancelPolicy(true);
        this.workers = Executors.newCachedThreadPool(WorkerThread.factory(prefix + "-worker"));
        this.ownListenerExecutor = listenerExecutor.isPresent()
                ? Optional.empty()
                : Optional.of(Executors.newSingleThreadExecutor(daemon(prefix + "-listener")));
        Executor listeners = listenerExecutor.orElseGet(ownListenerExecutor::orElseThrow);
        this.keeper = new LeaseKeeper(
                backend, capabilities.leaseModel(), leaseTime, atRiskThreshold, ticker, scheduler, workers);
        this.storeRequests = backend.storeRequests().isPresent()
                ? Optional.of(() -> backend.storeRequests().orElse(0))
                : Optional.empty();
        LockerFailures failures = new LockerFailures(backendName);
        this.waiters = new Waiters(backendName, failures);
        this.held = new HeldLocks(
                backend, keeper, ticker, clock, listeners, scheduler, workers, waiters, failures, lockDelay);
        this.acquirer = new Acquirer(backend, held, waiters, observing, failures, ownerLabel);
        this.async = new AsyncAcquirer(backend, acquirer, held, waiters, observing, failures, ticker, workers);
        this.multiKey = new MultiKeyLocking(acquirer, held, waiters, ticker, leaseTime, listeners);
        this.paths = new DefaultLockable.Paths(acquirer, async, ticker, leaseTime);
        this.elections = Elections.of(
                backendName, capabilities, async, this::inspect, waiters, listeners, workers, scheduler, leaseTime);
        observing.lockerOpened(storeRequests);
    }

    /** How many timers the lease keeper set so far; for tests. */
    long timersSet() {
        return keeper.timersSet();
    }

    /** An exclusive lock on {@code key}: renewed while held when {@code fixedLease} is empty. */
    private Ask exclusive(String key, Optional<Duration> fixedLease) {
        return Ask.exclusive(key, fixedLease, leaseTime);
    }

    @Override
    public RemoteLock lock(String key) throws InterruptedException {
        return acquirer.lock(exclusive(Checks.key(key), RENEWED), Deadline.unbounded(ticker));
    }

    @Override
    public RemoteLock lock(String key, Duration maxWait) throws InterruptedException {
        Checks.key(key);
        Checks.positive(maxWait, "maxWait");
        return acquirer.lock(exclusive(key, RENEWED), Deadline.after(maxWait, ticker));
    }

    @Override
    public RemoteLock lockFor(String key, Duration leaseTime) throws InterruptedException {
        Checks.key(key);
        Checks.positive(leaseTime, "leaseTime");
        return acquirer.lock(exclusive(key, Optional.of(leaseTime)), Deadline.unbounded(ticker));
    }

    @Override
    public RemoteLock lockFor(String key, Duration leaseTime, Duration maxWait) throws InterruptedException {
        Checks.key(key);
        Checks.positive(leaseTime, "leaseTime");
        Checks.positive(maxWait, "maxWait");
        return acquirer.lock(exclusive(key, Optional.of(leaseTime)), Deadline.after(maxWait, ticker));
    }

    @Override
    public Optional<RemoteLock> tryLock(String key) {
        return acquirer.tryLock(exclusive(Checks.key(key), RENEWED));
    }

    @Override
    public Optional<RemoteLock> tryLockFor(String key, Duration leaseTime) {
        Checks.positive(leaseTime, "leaseTime");
        return acquirer.tryLock(exclusive(Checks.key(key), Optional.of(leaseTime)));
    }

    @Override
    public RemoteLockGroup lockAll(Collection<String> keys, Duration maxWait) throws InterruptedException {
        return multiKey.lockAll(keys, maxWait);
    }

    @Override
    public <T, X extends Exception> T withLock(String key, Duration maxWait, LockedCall<T, X> action)
            throws X, InterruptedException {
        RemoteLock lock = lock(key, maxWait);
        return MultiKeyLocking.runHolding(List.of(lock), action);
    }

    @Override
    public <X extends Exception> void withLock(String key, Duration maxWait, LockedRun<X> action)
            throws X, InterruptedException {
        withLock(key, maxWait, MultiKeyLocking.asCall(action));
    }

    @Override
    public <T, X extends Exception> T withLocks(Collection<String> keys, Duration maxWait, LockedCall<T, X> action)
            throws X, InterruptedException {
        RemoteLockGroup group = lockAll(keys, maxWait);
        return MultiKeyLocking.runHolding(group.locks(), action);
    }

    @Override
    public <X extends Exception> void withLocks(Collection<String> keys, Duration maxWait, LockedRun<X> action)
            throws X, InterruptedException {
        withLocks(keys, maxWait, MultiKeyLocking.asCall(action));
    }

    @Override
    public CompletableFuture<RemoteLock> lockAsync(String key, Duration maxWait) {
        Checks.key(key);
        Checks.positive(maxWait, "maxWait");
        return async.lockAsync(exclusive(key, RENEWED), maxWait);
    }

    @Override
    public CompletableFuture<Optional<RemoteLock>> tryLockAsync(String key) {
        return async.tryLockAsync(exclusive(Checks.key(key), RENEWED));
    }

    @Override
    public RemoteReadWriteLock readWriteLock(String key) {
        Checks.key(key);
        offered(LockKind.READ, "read-write locks");
        return DefaultLockable.readWriteLock(paths, key);
    }

    @Override
    public RemoteSemaphore semaphore(String key, int permits) {
        Checks.key(key);
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, got " + permits);
        }
        offered(LockKind.PERMIT, "semaphores");
        return DefaultLockable.semaphore(paths, key, permits);
    }

    private void offered(LockKind kind, String what) {
        waiters.ensureOpen();
        if (!capabilities.offers(kind)) {
            throw new UnsupportedOperationException("The " + backendName + " backend offers no " + what + " (it offers "
                    + capabilities.kinds().stream().map(LockKind::label).toList() + ")");
        }
    }

    @Override
    public LeaderElection election(String name) {
        return elections.election(name);
    }

    @Override
    public String ownerLabel() {
        return ownerLabel;
    }

    @Override
    public LockState inspect(String key) {
        Checks.key(key);
        offered(Operation.INSPECT, "inspection");
        return backend.inspect(key);
    }

    @Override
    public List<LockState> listHeld() {
        offered(Operation.INSPECT, "inspection");
        return backend.listHeld();
    }

    @Override
    public List<LockHolder> breakLock(String key) {
        Checks.key(key);
        offered(Operation.BREAK, "breaking a lock");
        return backend.breakLock(key);
    }

    @Override
    public List<LockHolder> requestRelease(String key) {
        Checks.key(key);
        offered(Operation.REQUEST_RELEASE, "asking a holder to let go");
        return backend.requestRelease(key);
    }

    private void offered(Operation operation, String what) {
        waiters.ensureOpen();
        if (!capabilities.offers(operation)) {
            throw new UnsupportedOperationException("The " + backendName + " backend offers no " + what + " (it offers "
                    + capabilities.operations() + ")");
        }
    }

    @Override
    public Capabilities capabilities() {
        waiters.ensureOpen();
        return capabilities;
    }

    /**
     * Ends every wait with {@link io.distlock.LockerClosedException} (threads blocked in the backend are interrupted,
     * asynchronous attempts withdrawn), releases every lock still held, then disconnects. A grant that arrives during
     * or after this is released at once.
     */
    @Override
    public void close() {
        if (!waiters.close()) {
            return;
        }
        elections.lockerClosed(); // before the locks are released, so that each leader is told why
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
        return named(name, Thread::new);
    }

    /** Daemon threads made by {@code make}, named {@code <name>-1}, {@code <name>-2}, ... */
    static ThreadFactory named(String name, java.util.function.BiFunction<Runnable, String, Thread> make) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = make.apply(r, name + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public String toString() {
        return "RemoteLocker[" + backendName + ", owner " + ownerLabel + (waiters.closed() ? ", closed" : "") + "]";
    }
}
