package io.distlock;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * What the locks of one locker do, for metrics and tracing: every acquisition from its start to its outcome, and every
 * granted lock from its grant to its release or loss, with renewals in between. Give one to {@link
 * RemoteLockerBuilder#observer}; the {@code distlock-micrometer} module maps it onto Micrometer meters and
 * observations. {@code lock-api} itself depends on no metrics library.
 *
 * <p>The callbacks run on the thread that did the work (the caller's, a renewal worker's, a store client's): they must
 * return quickly and never block. One that throws is logged and ignored; it never changes what the lock does. Nothing
 * is reported for calls made after the locker was closed (they throw {@link LockerClosedException} before starting).
 */
public interface LockObserver {

    /** Observes nothing: the default. */
    static LockObserver none() {
        return NoObserver.INSTANCE;
    }

    /**
     * The locker was opened; called once, before any other callback.
     *
     * @param scheme the URI scheme of the store ({@code zk}, {@code etcd}, {@code redis}, {@code cassandra}, ...), to
     *     tell the stores apart in the figures
     * @param storeRequests the number of requests the backend has sent to the store so far, where it counts them
     *     (empty otherwise)
     */
    default void lockerOpened(String scheme, java.util.Optional<LongSupplier> storeRequests) {}

    /**
     * The locker was closed; called once, after its backend closed, the last callback of the locker's own (a hold of a
     * lock released at the close may still hear of it from another thread).
     *
     * @param scheme the URI scheme of the store, as {@link #lockerOpened} gave it
     * @param storeRequests the very supplier {@link #lockerOpened} was given, its count now final: an observer that
     *     keeps it to sum the lockers' requests can take its last count and let it go (it reaches the closed backend)
     */
    default void lockerClosed(String scheme, java.util.Optional<LongSupplier> storeRequests) {}

    /**
     * An acquisition of {@code key} begins: one per {@code lock}, {@code tryLock}, {@code lockAsync} and {@code
     * tryLockAsync} call (of the locker, or of a {@link Lockable}: a side of a read-write lock, a semaphore), and one
     * per key of {@code lockAll}. Called through {@link #acquisitionStarted(String, String, Kind, LockKind)}, which
     * also says what kind of grant is asked for.
     *
     * @return told how the acquisition ends, exactly once
     */
    Acquisition acquisitionStarted(String scheme, String key, Kind kind);

    /**
     * An acquisition of a grant of {@code lockKind} on {@code key} begins: what the locker calls, once per acquisition
     * as {@link #acquisitionStarted(String, String, Kind)} describes, for a lock and for a side of a read-write lock or
     * a semaphore's permit alike. By default it hands over to {@link #acquisitionStarted(String, String, Kind)}, so an
     * observer written before there were other kinds than the lock hears every acquisition as it did; override this one
     * to tell the kinds apart.
     *
     * @param kind how the grant is asked for: waiting or one attempt
     * @param lockKind what is asked for: the lock, the read or the write side of a read-write lock, or a permit (each
     *     grant's {@link RemoteLock#kind()} is the same)
     * @return told how the acquisition ends, exactly once
     */
    default Acquisition acquisitionStarted(String scheme, String key, Kind kind, LockKind lockKind) {
        return acquisitionStarted(scheme, key, kind);
    }

    /** How the lock is asked for. */
    enum Kind {
        /** {@code lock}, {@code lockAll}, {@code withLock}, {@code lockAsync}: waits. */
        LOCK,
        /** {@code tryLock}, {@code tryLockAsync}: one attempt. */
        TRY_LOCK
    }

    /** How an acquisition ended without the lock. */
    enum Outcome {
        /** {@code tryLock} found the key held (or lost the race for it). */
        BUSY,
        /** The wait ran out ({@link LockTimeoutException}). */
        TIMED_OUT,
        /** The store failed or could not be reached ({@link LockBackendException}). */
        FAILED,
        /** The caller was interrupted, or cancelled the future. */
        INTERRUPTED,
        /** The locker was closed meanwhile ({@link LockerClosedException}). */
        CLOSED
    }

    /** One acquisition. */
    interface Acquisition {

        /** Granted: {@code lock} is held; the returned hold is told what happens to it. */
        Hold granted(RemoteLock lock);

        /**
         * Ended without the lock.
         *
         * @param failure what the caller was given ({@link LockTimeoutException} for {@link Outcome#TIMED_OUT}); null
         *     for {@link Outcome#BUSY}
         */
        void ended(Outcome outcome, Throwable failure);
    }

    /** One granted lock, until it is released or lost. */
    interface Hold {

        /** A renewal of the lease succeeded, after {@code took}. */
        default void renewed(Duration took) {}

        /** A renewal failed (the store did not answer; it is tried again until the lease runs out). */
        default void renewalFailed(Duration took, Throwable failure) {}

        /** The lock was lost ({@link RemoteLock#onLost}); nothing more is reported for it. */
        default void lost(String reason) {}

        /** The lock was released ({@link RemoteLock#release()}) with {@code result}; nothing more is reported. */
        default void released(ReleaseResult result) {}
    }
}
