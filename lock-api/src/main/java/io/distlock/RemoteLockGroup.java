package io.distlock;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The locks taken together by {@link RemoteLocker#lockAll}, released together by {@link #close()}.
 *
 * <p>Thread-safe.
 */
public interface RemoteLockGroup extends AutoCloseable {

    /** The held locks, in the order they were taken (the keys' natural order). */
    List<RemoteLock> locks();

    /** Whether every lock of the group is still held: false as soon as any one of them is lost or released. */
    boolean isHeld();

    /**
     * Registers a listener called once, with this group, when the first of its locks is lost (see {@link
     * RemoteLock#onLost(Consumer)}); it runs on the locker's listener executor. If a lock of the group is already
     * lost, the listener is called at once on the calling thread.
     *
     * @return this group
     */
    RemoteLockGroup onLost(Consumer<? super RemoteLockGroup> listener);

    /**
     * Registers a listener called once, on {@code executor}, when the first lock of this group is lost.
     *
     * @return this group
     */
    RemoteLockGroup onLost(Consumer<? super RemoteLockGroup> listener, Executor executor);

    /**
     * Releases every lock of the group, in the reverse of the order they were taken. Idempotent. If some releases
     * fail, the others are still attempted and the first failure is thrown with the rest suppressed.
     *
     * @throws LockBackendException if the store could not be told for some lock
     */
    @Override
    void close();
}
