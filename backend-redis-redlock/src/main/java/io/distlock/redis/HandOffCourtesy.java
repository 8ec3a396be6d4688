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
 * had to wait never pauses. The releaser's waiting siblings keep it too ({@link #wakeDelayNanos}): the locker's own
 * release message wakes its own next waiter only after what is left of the courtesy, while other lockers take the key.
 */
final class HandOffCourtesy {

    /** How many recent releases are remembered; an older one has long outlived any courtesy. */
    private static final int REMEMBERED_RELEASES = 1024;

    /**
     * How recently, in courtesies, another locker must have released a key for this locker's own release of it to wake
     * its own waiter only after the courtesy (other lockers wait for it now): 500 ms with the 2 ms default.
     */
    static final int RIVALS_SEEN_COURTESIES = 250;

    /** In {@link #ownReleases}: a release of this locker's that owes no courtesy (its acquisition never waited). */
    private static final long UNCONTENDED = Long.MIN_VALUE;

    private final long courtesyNanos;

    /**
     * Release id (see {@code release.lua}) to the {@link System#nanoTime()} of each of this locker's releases of a
     * contended lease, or {@link #UNCONTENDED}: so that none of its own releases is taken for another locker's.
     */
    private final Map<String, Long> ownReleases = remembered();

    /** Redis key to the {@link System#nanoTime()} of the last release of it by another locker, as heard. */
    private final Map<String, Long> rivalReleases = remembered();

    /** Redis key to the {@link System#nanoTime()} of this locker's last release of a contended lease of it. */
    private final Map<String, Long> released = remembered();

    HandOffCourtesy(Duration courtesy) {
        this.courtesyNanos = courtesy.toNanos();
    }

    /**
     * Notes a release about to be sent, before it is: its message can reach this locker's subscription before the
     * masters' answers reach the releasing thread.
     */
    void releasing(RedlockLease lease) {
        if (courtesyNanos > 0) {
            long at = lease.waitedFor() ? System.nanoTime() : UNCONTENDED;
            synchronized (released) {
                ownReleases.put(lease.releaseId(), at);
            }
        }
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

    /**
     * How long to hold back the wake-up of this locker's own waiter of {@code redisKey} for the release {@code
     * releaseId} just heard: what is left of the courtesy when that is this locker's own release of a contended lease
     * and another locker released the key lately ({@link #RIVALS_SEEN_COURTESIES}), so that the releaser's sibling threads
     * let the other lockers' woken waiters try first, as the releaser itself does; 0 otherwise. With no other locker
     * releasing the key (all its waiters in this process), nothing is held back: a pause would only leave it free.
     */
    long wakeDelayNanos(String releaseId, String redisKey) {
        if (courtesyNanos == 0) {
            return 0;
        }
        long now = System.nanoTime();
        synchronized (released) {
            Long own = ownReleases.get(releaseId);
            if (own == null) {
                rivalReleases.put(redisKey, now);
                return 0;
            }
            if (own == UNCONTENDED) {
                return 0;
            }
            Long rival = rivalReleases.get(redisKey);
            if (rival == null || now - rival > RIVALS_SEEN_COURTESIES * courtesyNanos) {
                return 0;
            }
            return Math.max(0, courtesyNanos - (now - own));
        }
    }

    private static Map<String, Long> remembered() {
        return new LinkedHashMap<>(64, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                return size() > REMEMBERED_RELEASES;
            }
        };
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
