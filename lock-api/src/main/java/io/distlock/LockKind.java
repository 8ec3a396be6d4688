package io.distlock;

/**
 * What a grant is: the exclusive lock, one side of a read-write lock, or a semaphore's permit. Each is a lease with a
 * {@link RemoteLock} handle. To a store they are one idea: an acquisition is <em>exclusive</em>, or <em>shared</em> with
 * a limit (unbounded for readers, N for a semaphore's permits), within the key's {@link Space}.
 *
 * <p>The lock on key {@code k}, the read-write lock on {@code k} and the semaphore on {@code k} are three separate
 * things that never exclude each other: each lives in its own space in the store.
 */
public enum LockKind {
    /** The exclusive lock of {@link RemoteLocker#lock(String)} and its siblings. */
    LOCK(Space.LOCK, true),
    /** The shared side of a {@link RemoteReadWriteLock}: any number of readers hold it at once, and no writer. */
    READ(Space.READ_WRITE, false),
    /** The exclusive side of a {@link RemoteReadWriteLock}: excludes every reader and every other writer. */
    WRITE(Space.READ_WRITE, true),
    /** One of a {@link RemoteSemaphore}'s N permits: at most N holders at once. */
    PERMIT(Space.SEMAPHORE, false);

    /** Where a store keeps a kind's grants: kinds of one space compete for the key, kinds of different spaces never. */
    public enum Space {
        /** Exclusive locks. */
        LOCK,
        /** Read-write locks: readers and writers of one key. */
        READ_WRITE,
        /** Semaphores: the permits of one key. */
        SEMAPHORE
    }

    private final Space space;
    private final boolean exclusive;

    LockKind(Space space, boolean exclusive) {
        this.space = space;
        this.exclusive = exclusive;
    }

    /** The space this kind's grants live in. */
    public Space space() {
        return space;
    }

    /** Whether a grant of this kind excludes every other grant in its space on the key. */
    public boolean exclusive() {
        return exclusive;
    }

    /** Lower case, as metrics and messages show it: {@code lock}, {@code read}, {@code write}, {@code permit}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
