package io.distlock.redis;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The releaser's courtesy ({@code courtesy} option): a locker that releases a key it had to wait for, and asks for it
 * again at once, lets the waiters its release woke try first. Without it the releaser wins most of those races (its
 * next {@code SET NX} leaves as soon as the release is answered, a woken waiter's only after the release message and
 * a hop to the waiter) and keeps the lock in its process far beyond its share. Only an attempt within the courtesy of
 * the locker's own release of a contended lease waits, and only for what is left of it; a locker whose grants never
 * had to wait never pauses.
 */
final class HandOffCourtesy {

    /** How many recent releases are remembered; an older one has long outlived any courtesy. */
    private static final int REMEMBERED_RELEASES = 1024;

    private final long courtesyNanos;

    /** Redis key to the {@link System#nanoTime()} of this locker's last release of a contended lease of it. */
    private final Map<String, Long> released = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
            return size() > REMEMBERED_RELEASES;
        }
    };

    HandOffCourtesy(Duration courtesy) {
        this.courtesyNanos = courtesy.toNanos();
    }

    /** Notes a release that a majority confirmed. */
    void released(RedlockLease lease) {
        if (courtesyNanos > 0 && lease.waitedFor()) {
            long now = System.nanoTime();
            synchronized (released) {
                released.put(lease.redisKey(), now);
            }
        }
    }

    /** How long a waiting acquisition of {@code redisKey} starting now lets others try first: 0 mostly. */
    long delayNanos(String redisKey) {
        if (courtesyNanos == 0) {
            return 0;
        }
        Long at;
        synchronized (released) {
            at = released.remove(redisKey);
        }
        return at == null ? 0 : Math.max(0, courtesyNanos - (System.nanoTime() - at));
    }
}
