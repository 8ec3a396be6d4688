package io.distlock.internal;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The non-re-entrancy rule of seed 003: a thread asking its locker for a key it already holds through that locker is
 * almost certainly a bug (it would wait for itself), so it fails at once. Other threads of the same locker wait as
 * usual.
 */
final class ReentrancyGuard {

    private record Holding(String key, long threadId) {}

    private final ConcurrentHashMap<Holding, DefaultRemoteLock> holdings = new ConcurrentHashMap<>();

    /** Throws if {@code threadId} holds {@code key} through this locker. */
    void check(String key, long threadId) {
        DefaultRemoteLock held = holdings.get(new Holding(key, threadId));
        if (held != null && held.isHeld()) {
            throw new IllegalStateException("Lock '" + key + "' is already held by this thread through this locker"
                    + " (owner " + held.ownerId() + "); distlock locks are not re-entrant: release it first, or keep"
                    + " using the lock you hold");
        }
    }

    void register(String key, long threadId, DefaultRemoteLock lock) {
        holdings.put(new Holding(key, threadId), lock);
    }

    void unregister(String key, long threadId, DefaultRemoteLock lock) {
        holdings.remove(new Holding(key, threadId), lock);
    }
}
