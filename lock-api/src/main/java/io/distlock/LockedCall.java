package io.distlock;

/**
 * Work run while holding a lock that returns a value, for {@link RemoteLocker#withLock(String, java.time.Duration,
 * LockedCall)}.
 *
 * @param <T> the result
 * @param <X> the checked exception the work may throw ({@link RuntimeException} when none)
 */
@FunctionalInterface
public interface LockedCall<T, X extends Exception> {
    /** Does the work. */
    T call() throws X;
}
