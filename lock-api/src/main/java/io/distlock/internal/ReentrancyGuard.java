package io.distlock.internal;

import io.distlock.LockKind;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The non-re-entrancy rule of seed 003: a thread asking its locker for a key it already holds through that locker is
 * almost certainly a bug (it would wait for itself), so it fails at once. Other threads of the same locker wait as
 * usual. The rule holds per {@link LockKind.Space space}: a thread that holds a read-write lock's read side is refused
 * its write side (an upgrade in place, which would wait for itself) and another read grant alike, and a thread that
 * holds a semaphore's permit is refused a second one; the lock on the same key is another thing and stays free to take.
 */
final class ReentrancyGuard {

    /**
     * A key of {@link #holdings}. Its {@code equals} and {@code hashCode} are written out: a record's generated ones are
     * bootstrapped on their first call ({@code ObjectMethods}), which cost a fresh JVM 2-3 ms at its first grant and
     * 5-8 ms at its first release, on the caller's path (measured with stamps in the failover workload's candidates).
     */
    private record Holding(LockKind.Space space, String key, long threadId) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Holding h && h.threadId == threadId && h.space == space && h.key.equals(key);
        }

        @Override
        public int hashCode() {
            return (31 * space.hashCode() + key.hashCode()) * 31 + Long.hashCode(threadId);
        }
    }

    private final ConcurrentHashMap<Holding, DefaultRemoteLock> holdings = new ConcurrentHashMap<>();

    /** Throws if {@code threadId} holds a grant of {@code kind}'s space on {@code key} through this locker. */
    void check(LockKind kind, String key, long threadId) {
        if (holdings.isEmpty()) {
            return; // nothing held through this locker: no look-up (and no key object) needed
        }
        DefaultRemoteLock held = holdings.get(new Holding(kind.space(), key, threadId));
        if (held == null || !held.isHeld()) {
            return;
        }
        String owner = " (owner " + held.ownerId() + ")";
        throw new IllegalStateException(
                switch (kind.space()) {
                    case LOCK ->
                        "Lock '" + key + "' is already held by this thread through this locker" + owner
                                + "; distlock locks are not re-entrant: release it first, or keep using the lock you hold";
                    case READ_WRITE ->
                        "The " + held.kind().label() + " side of read-write lock '" + key
                                + "' is already held by this thread through this locker" + owner + "; asking for its "
                                + kind.label() + " side would wait for itself: a read lock is not upgraded to a write"
                                + " lock, nor taken twice; release the side you hold first";
                    case SEMAPHORE ->
                        "A permit of semaphore '" + key + "' is already held by this thread through"
                                + " this locker" + owner + "; a thread takes one permit at a time: release it first, or"
                                + " take the next one on another thread";
                });
    }

    void register(LockKind kind, String key, long threadId, DefaultRemoteLock lock) {
        holdings.put(new Holding(kind.space(), key, threadId), lock);
    }

    void unregister(LockKind kind, String key, long threadId, DefaultRemoteLock lock) {
        holdings.remove(new Holding(kind.space(), key, threadId), lock);
    }
}
