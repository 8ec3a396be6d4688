package io.distlock.internal;

import io.distlock.Capabilities;
import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LockTimeoutException;
import io.distlock.LockedCall;
import io.distlock.LockedRun;
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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link RemoteLocker} implementation: the machinery shared by every backend (checks, owner ids, renewal,
 * loss, multi-key order and roll-back, re-entrancy, async) around a {@link LockBackend} that only speaks to its store.
 */
final class DefaultRemoteLocker implements RemoteLocker {

    private static final Logger log = LoggerFactory.getLogger(DefaultRemoteLocker.class);
    private static final AtomicInteger LOCKERS = new AtomicInteger();

    private final String backendName;
    private final LockBackend backend;
    private final Capabilities capabilities;
    private final Duration leaseTime;
    private final Ticker ticker;
    private final Clock clock;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService asyncExecutor;
    private final LeaseKeeper keeper;
    private final ReentrancyGuard guard = new ReentrancyGuard();
    private final ConcurrentHashMap<DefaultRemoteLock, Held> held = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** What the locker keeps about a held lock until it is released or lost. */
    private record Held(long threadId, LeaseKeeper.Tracking tracking) {}

    DefaultRemoteLocker(String backendName, LockBackend backend, Duration leaseTime, Ticker ticker, Clock clock) {
        this.backendName = backendName;
        this.backend = backend;
        this.capabilities = backend.capabilities();
        this.leaseTime = leaseTime;
        this.ticker = ticker;
        this.clock = clock;
        int n = LOCKERS.incrementAndGet();
        ScheduledThreadPoolExecutor leases =
                new ScheduledThreadPoolExecutor(1, daemon("distlock-" + backendName + "-" + n + "-lease"));
        // Every release cancels its lock's renewal and watchdog: drop them from the queue at once.
        leases.setRemoveOnCancelPolicy(true);
        this.scheduler = leases;
        this.asyncExecutor = Executors.newCachedThreadPool(daemon("distlock-" + backendName + "-" + n + "-async"));
        this.keeper = new LeaseKeeper(backend, capabilities.leaseModel(), leaseTime, ticker, scheduler);
    }

    Ticker ticker() {
        return ticker;
    }

    Clock clock() {
        return clock;
    }

    LockBackend backend() {
        return backend;
    }

    @Override
    public RemoteLock lock(String key) throws InterruptedException {
        return lockUntil(Checks.key(key), Deadline.unbounded(ticker));
    }

    @Override
    public RemoteLock lock(String key, Duration maxWait) throws InterruptedException {
        Checks.key(key);
        Checks.positive(maxWait, "maxWait");
        return lockUntil(key, Deadline.after(maxWait, ticker));
    }

    private RemoteLock lockUntil(String key, Deadline deadline) throws InterruptedException {
        ensureOpen();
        long thread = Thread.currentThread().getId();
        guard.check(key, thread);
        return acquire(key, deadline, thread)
                .orElseThrow(
                        () -> new LockTimeoutException(key, deadline.maxWait().orElseThrow()));
    }

    @Override
    public Optional<RemoteLock> tryLock(String key) {
        Checks.key(key);
        ensureOpen();
        long thread = Thread.currentThread().getId();
        guard.check(key, thread);
        return attempt(key, thread);
    }

    private Optional<RemoteLock> attempt(String key, long thread) {
        DefaultRemoteLock lock = new DefaultRemoteLock(this, key, OwnerIds.next());
        Optional<Lease> lease;
        try {
            lease = backend.tryAcquire(request(lock));
        } catch (RuntimeException e) {
            throw backendFailure(key, "tryLock", e);
        }
        return lease.map(l -> adopt(lock, l, thread));
    }

    /** Acquires through the backend and adopts the lease; empty when the deadline passed. */
    private Optional<RemoteLock> acquire(String key, Deadline deadline, long thread) throws InterruptedException {
        DefaultRemoteLock lock = new DefaultRemoteLock(this, key, OwnerIds.next());
        Optional<Lease> lease;
        try {
            lease = backend.acquire(request(lock), deadline);
        } catch (RuntimeException e) {
            throw backendFailure(key, "lock", e);
        }
        return lease.map(l -> adopt(lock, l, thread));
    }

    private LockRequest request(DefaultRemoteLock lock) {
        return new LockRequest(lock.key(), lock.ownerId(), leaseTime, lock::markLost);
    }

    /** Turns a granted lease into a held lock, or frees it at once if the locker closed or it was lost meanwhile. */
    private RemoteLock adopt(DefaultRemoteLock lock, Lease lease, long thread) {
        if (!lock.granted(lease)) {
            releaseQuietly(lease);
            throw new LockBackendException(
                    "Lock '" + lock.key() + "' was lost by the store while it was being granted");
        }
        held.put(lock, new Held(thread, keeper.track(lock)));
        guard.register(lock.key(), thread, lock);
        if (closed.get()) {
            lock.release();
            throw closedException();
        }
        log.debug("Acquired lock '{}' as {} (token {})", lock.key(), lock.ownerId(), lease.fencingToken());
        return lock;
    }

    /** Called by a lock leaving the held state: stops its renewal; a lost lease is also deleted if still there. */
    void forget(DefaultRemoteLock lock, boolean lost) {
        Held h = held.remove(lock);
        if (h != null) {
            h.tracking().stop();
            guard.unregister(lock.key(), h.threadId(), lock);
        }
        if (lost && !scheduler.isShutdown()) {
            // The store may still hold it (the renewal failed, not the store): free it, only if still ours.
            dispatch(() -> releaseQuietly(lock.lease()));
        }
    }

    /** Runs a listener or clean-up on the locker's thread. */
    void dispatch(Runnable task) {
        try {
            scheduler.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            task.run();
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
                Optional<RemoteLock> lock = acquire(key, deadline, thread);
                if (lock.isEmpty()) {
                    throw new LockTimeoutException(key, maxWait);
                }
                taken.add(lock.get());
            }
            complete = true;
            return new DefaultLockGroup(taken);
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

    /** Seed 003's {@code try ... after}: runs the action, always releases, and reports a lease lost meanwhile. */
    private static <T, X extends Exception> T runHolding(List<RemoteLock> locks, LockedCall<T, X> action) throws X {
        T result;
        try {
            result = action.call();
        } catch (Throwable failure) {
            try {
                DefaultLockGroup.releaseInReverse(locks);
            } catch (RuntimeException releaseFailure) {
                failure.addSuppressed(releaseFailure);
            }
            throw failure;
        }
        List<String> lost = new ArrayList<>();
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

    @Override
    public CompletableFuture<RemoteLock> lockAsync(String key, Duration maxWait) {
        Checks.key(key);
        Checks.positive(maxWait, "maxWait");
        ensureOpen();
        long thread = Thread.currentThread().getId();
        guard.check(key, thread);
        Deadline deadline = Deadline.after(maxWait, ticker);
        return async(() -> acquire(key, deadline, thread).orElseThrow(() -> new LockTimeoutException(key, maxWait)));
    }

    @Override
    public CompletableFuture<Optional<RemoteLock>> tryLockAsync(String key) {
        Checks.key(key);
        ensureOpen();
        long thread = Thread.currentThread().getId();
        guard.check(key, thread);
        return async(() -> attempt(key, thread));
    }

    /** Work that produces locks, run on the async pool; a result nobody can receive any more is released. */
    private interface LockWork<T> {
        T run() throws InterruptedException;
    }

    private <T> CompletableFuture<T> async(LockWork<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Future<?> task = asyncExecutor.submit(() -> {
            try {
                T value = work.run();
                if (!result.complete(value)) {
                    releaseUnwanted(value);
                }
            } catch (InterruptedException e) {
                result.cancel(false);
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        result.whenComplete((v, e) -> {
            if (result.isCancelled()) {
                task.cancel(true);
            }
        });
        return result;
    }

    private static void releaseUnwanted(Object value) {
        if (value instanceof RemoteLock lock) {
            lock.release();
        } else if (value instanceof Optional<?> maybe && maybe.isPresent() && maybe.get() instanceof RemoteLock lock) {
            lock.release();
        }
    }

    @Override
    public Capabilities capabilities() {
        ensureOpen();
        return capabilities;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
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
        asyncExecutor.shutdownNow();
        scheduler.shutdownNow();
        try {
            scheduler.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        backend.close();
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw closedException();
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException(
                "This " + backendName + " locker is closed; open a new one with RemoteLockers.open(...)");
    }

    private RuntimeException backendFailure(String key, String operation, RuntimeException e) {
        if (e instanceof io.distlock.LockException
                || e instanceof IllegalArgumentException
                || e instanceof IllegalStateException) {
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
        return "RemoteLocker[" + backendName + (closed.get() ? ", closed" : "") + "]";
    }
}
