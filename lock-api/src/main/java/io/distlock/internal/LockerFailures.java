package io.distlock.internal;

import io.distlock.LockBackendException;
import io.distlock.LockException;
import io.distlock.LockerClosedException;

/**
 * The failures one locker gives its callers, worded once for every part of it: the closed locker, and a backend's
 * failure in distlock's one error model. Used by the acquisition paths, the held locks and the close-safety.
 */
final class LockerFailures {

    private final String backendName;

    LockerFailures(String backendName) {
        this.backendName = backendName;
    }

    /** What a call on the closed locker (or one that the close ended) throws. */
    LockerClosedException closed() {
        return new LockerClosedException(
                "This " + backendName + " locker is closed; open a new one with RemoteLockers.open(...)");
    }

    /**
     * One error model: distlock's own exceptions pass; anything else a backend let out (a client library's exception,
     * even one that is an {@link IllegalStateException} such as Curator's) becomes a {@link LockBackendException}.
     */
    RuntimeException backend(String key, String operation, RuntimeException e) {
        if (e instanceof LockException || e instanceof LockerClosedException) {
            return e;
        }
        return new LockBackendException(
                "The " + backendName + " store failed during " + operation + "('" + key + "'): " + e, e);
    }
}
