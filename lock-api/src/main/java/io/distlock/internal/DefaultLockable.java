package io.distlock.internal;

import io.distlock.LockKind;
import io.distlock.Lockable;
import io.distlock.RemoteLock;
import io.distlock.RemoteReadWriteLock;
import io.distlock.RemoteSemaphore;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A side of a read-write lock or a semaphore, on one key: checks the arguments, says what each call asks for (an
 * {@link Ask} of its {@link LockKind} and limit) and delegates to the locker's acquisition paths, as the locker's own
 * methods do for the lock. Holds nothing but what it asks for; the locker's close ends its waits and releases its grants
 * with every other.
 */
class DefaultLockable implements Lockable {

    /** The parts of a locker a lockable asks through. */
    record Paths(Acquirer acquirer, AsyncAcquirer async, Ticker ticker, Duration leaseTime) {}

    private static final Optional<Duration> RENEWED = Optional.empty();

    private final Paths paths;
    private final String key;
    private final LockKind kind;
    private final int limit;

    private DefaultLockable(Paths paths, String key, LockKind kind, int limit) {
        this.paths = paths;
        this.key = key;
        this.kind = kind;
        this.limit = limit;
    }

    /** The read-write lock on {@code key}, already checked. */
    static RemoteReadWriteLock readWriteLock(Paths paths, String key) {
        Lockable read = new DefaultLockable(paths, key, LockKind.READ, LockRequest.UNBOUNDED);
        Lockable write = new DefaultLockable(paths, key, LockKind.WRITE, 1);
        return new RemoteReadWriteLock() {
            @Override
            public String key() {
                return key;
            }

            @Override
            public Lockable readLock() {
                return read;
            }

            @Override
            public Lockable writeLock() {
                return write;
            }

            @Override
            public String toString() {
                return "RemoteReadWriteLock[" + key + "]";
            }
        };
    }

    /** The semaphore on {@code key}, already checked, with {@code permits} permits (at least 1). */
    static RemoteSemaphore semaphore(Paths paths, String key, int permits) {
        return new Semaphore(paths, key, permits);
    }

    private static final class Semaphore extends DefaultLockable implements RemoteSemaphore {
        Semaphore(Paths paths, String key, int permits) {
            super(paths, key, LockKind.PERMIT, permits);
        }

        @Override
        public int permits() {
            return super.limit;
        }
    }

    private Ask ask(Optional<Duration> fixedLease) {
        return Ask.of(kind, limit, key, fixedLease, paths.leaseTime());
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public LockKind kind() {
        return kind;
    }

    @Override
    public RemoteLock lock() throws InterruptedException {
        return paths.acquirer().lock(ask(RENEWED), Deadline.unbounded(paths.ticker()));
    }

    @Override
    public RemoteLock lock(Duration maxWait) throws InterruptedException {
        Checks.positive(maxWait, "maxWait");
        return paths.acquirer().lock(ask(RENEWED), Deadline.after(maxWait, paths.ticker()));
    }

    @Override
    public Optional<RemoteLock> tryLock() {
        return paths.acquirer().tryLock(ask(RENEWED));
    }

    @Override
    public Optional<RemoteLock> tryLockFor(Duration leaseTime) {
        Checks.positive(leaseTime, "leaseTime");
        return paths.acquirer().tryLock(ask(Optional.of(leaseTime)));
    }

    @Override
    public RemoteLock lockFor(Duration leaseTime) throws InterruptedException {
        Checks.positive(leaseTime, "leaseTime");
        return paths.acquirer().lock(ask(Optional.of(leaseTime)), Deadline.unbounded(paths.ticker()));
    }

    @Override
    public RemoteLock lockFor(Duration leaseTime, Duration maxWait) throws InterruptedException {
        Checks.positive(leaseTime, "leaseTime");
        Checks.positive(maxWait, "maxWait");
        return paths.acquirer().lock(ask(Optional.of(leaseTime)), Deadline.after(maxWait, paths.ticker()));
    }

    @Override
    public CompletableFuture<RemoteLock> lockAsync(Duration maxWait) {
        Checks.positive(maxWait, "maxWait");
        return paths.async().lockAsync(ask(RENEWED), maxWait);
    }

    @Override
    public CompletableFuture<Optional<RemoteLock>> tryLockAsync() {
        return paths.async().tryLockAsync(ask(RENEWED));
    }

    @Override
    public String toString() {
        return kind == LockKind.PERMIT
                ? "RemoteSemaphore[" + key + ", permits=" + limit + "]"
                : "RemoteReadWriteLock[" + key + "]." + kind.label() + "Lock()";
    }
}
