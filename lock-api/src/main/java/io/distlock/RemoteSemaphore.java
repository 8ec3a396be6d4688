package io.distlock;

/**
 * A semaphore on a key with N permits: at most N holders at any moment, each holding one permit as a lease of its own
 * ({@link LockKind#PERMIT}), renewed while held and freed when its holder releases it, dies, or lets its lease run
 * out, so a crashed holder never takes a permit with it. Taken with the calls of a lock: {@link #lock()}, {@link
 * #tryLock()} and their siblings, each grant a {@link RemoteLock}.
 *
 * <p>It is not the lock of {@link RemoteLocker#lock(String)} nor the read-write lock on the same key. Every user of one
 * semaphore must give the same N: a grant never brings the holders above the smallest N among the holders and
 * itself, and a call whose N differs from that of the semaphore's current holders or waiters fails with a {@link
 * LockConfigurationException} naming both. On a fair backend ({@link Capabilities#fair()}) permits go in arrival order.
 *
 * <pre>{@code
 * RemoteSemaphore imports = locker.semaphore("nightly-import", 3); // at most three hosts at once
 * try (RemoteLock permit = imports.lock(Duration.ofMinutes(1))) {
 *     runImport();
 * }
 * }</pre>
 */
public interface RemoteSemaphore extends Lockable {

    /** How many permits the semaphore has: N. */
    int permits();
}
