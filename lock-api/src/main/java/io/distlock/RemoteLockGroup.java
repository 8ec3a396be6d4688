package io.distlock;

import java.util.List;

/**
 * The locks taken together by {@link RemoteLocker#lockAll}, released together by {@link #close()}.
 *
 * <p>Thread-safe.
 */
public interface RemoteLockGroup extends AutoCloseable {

    /** The held locks, in the order they were taken (the keys' natural order). */
    List<RemoteLock> locks();

    /** Whether every lock of the group is still held. */
    boolean isHeld();

    /**
     * Releases every lock of the group, in the reverse of the order they were taken. Idempotent. If some releases
     * fail, the others are still attempted and the first failure is thrown with the rest suppressed.
     *
     * @throws LockBackendException if the store could not be told for some lock
     */
    @Override
    void close();
}
