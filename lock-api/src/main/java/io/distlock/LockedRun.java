package io.distlock;

/**
 * Work run while holding a lock, for {@link RemoteLocker#withLock(String, java.time.Duration, LockedRun)}.
 *
 * @param <X> the checked exception the work may throw ({@link RuntimeException} when none)
 */
@FunctionalInterface
public interface LockedRun<X extends Exception> {
    /** Does the work. */
    void run() throws X;
}
