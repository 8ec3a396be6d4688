package io.distlock;

/** What {@link RemoteLock#release()} did. */
public enum ReleaseResult {
    /** The lock was held by this handle and is now free in the store. */
    RELEASED,
    /** This handle had already been released; nothing was done. */
    ALREADY_RELEASED,
    /** The lease had been lost before the release (see {@link RemoteLock#onLost}); nothing of ours was left to free. */
    ALREADY_LOST
}
