package io.distlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One thing on one key that grants {@link RemoteLock} handles: a side of a {@link RemoteReadWriteLock} or a {@link
 * RemoteSemaphore}. Its calls are those of {@link RemoteLocker} for a lock, with the same rules (leases renewed while
 * held unless fixed, waits with and without a deadline, one attempt, the asynchronous forms, the error model, the
 * non-re-entrancy rule: a thread that holds a grant of a read-write lock or of a semaphore through a locker is refused
 * another grant of the same one through that locker, so a read lock is never upgraded to a write lock in place).
 * Obtained from {@link RemoteLocker#readWriteLock(String)} and {@link RemoteLocker#semaphore(String, int)}; cheap, holds
 * nothing, and valid as long as its locker is open.
 */
public interface Lockable {

    /** The key. */
    String key();

    /** What its grants are. */
    LockKind kind();

    /** Waits as long as it takes; see {@link RemoteLocker#lock(String)}. */
    RemoteLock lock() throws InterruptedException;

    /** Waits at most {@code maxWait}; see {@link RemoteLocker#lock(String, Duration)}. */
    RemoteLock lock(Duration maxWait) throws InterruptedException;

    /** One attempt that never waits for a holder; see {@link RemoteLocker#tryLock(String)}. */
    Optional<RemoteLock> tryLock();

    /** One attempt for a fixed lease, never renewed; see {@link RemoteLocker#tryLockFor(String, Duration)}. */
    Optional<RemoteLock> tryLockFor(Duration leaseTime);

    /** Waits as long as it takes, for a fixed lease; see {@link RemoteLocker#lockFor(String, Duration)}. */
    RemoteLock lockFor(Duration leaseTime) throws InterruptedException;

    /** Waits at most {@code maxWait}, for a fixed lease; see {@link RemoteLocker#lockFor(String, Duration, Duration)}. */
    RemoteLock lockFor(Duration leaseTime, Duration maxWait) throws InterruptedException;

    /** Waits without holding a thread; see {@link RemoteLocker#lockAsync(String, Duration)}. */
    CompletableFuture<RemoteLock> lockAsync(Duration maxWait);

    /** One attempt on a thread of the locker's; see {@link RemoteLocker#tryLockAsync(String)}. */
    CompletableFuture<Optional<RemoteLock>> tryLockAsync();
}
