package io.distlock;

/**
 * A read-write lock on a key: any number of readers hold its {@link #readLock() read side} at once, and a writer holds
 * its {@link #writeLock() write side} alone, excluding every reader and every other writer. Each grant is a {@link
 * RemoteLock} lease, renewed, lost, extended, released and fenced as a lock is.
 *
 * <p>It is not the lock of {@link RemoteLocker#lock(String)} on the same key: the two never exclude each other (each
 * lives apart in the store). On every backend a waiting writer is served before readers that come after it, so a
 * stream of readers never starves it: a fair backend ({@link Capabilities#fair()}) serves readers and writers in
 * arrival order, and the others refuse new readers while a writer waits. A read lock is not upgraded to a write lock:
 * release the read side first (two readers that both waited to upgrade would wait for each other for ever); a thread
 * that asks for the write side while it holds the read side through the same locker is refused with an {@link
 * IllegalStateException}.
 *
 * <pre>{@code
 * RemoteReadWriteLock prices = locker.readWriteLock("prices");
 * try (RemoteLock read = prices.readLock().lock(Duration.ofSeconds(5))) {
 *     return cache.get();
 * }
 * }</pre>
 */
public interface RemoteReadWriteLock {

    /** The key. */
    String key();

    /** The shared side: {@link LockKind#READ} grants. */
    Lockable readLock();

    /** The exclusive side: {@link LockKind#WRITE} grants. */
    Lockable writeLock();
}
