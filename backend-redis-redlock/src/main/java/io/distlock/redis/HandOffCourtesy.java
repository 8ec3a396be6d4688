package io.distlock.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The releaser's courtesy ({@code courtesy} option): a locker that releases a key it had to wait for, and asks for it
 * again at once, lets the other lockers' waiters try first. Without it the releaser wins most of those races (its
 * next {@code SET NX} leaves as soon as the release is answered, a woken waiter's only after the release message and
 * a hop to the waiter) and keeps the lock in its process far beyond its share. Only an attempt within the courtesy of
 * the locker's own release of a contended lease waits, and only for what is left of it; a locker whose grants never
 * had to wait never pauses. The releaser's waiting siblings keep it too ({@link #heard}): the locker's own release
 * message wakes its own next waiter only after what is left of the courtesy, or at the locker's turn, while other
 * lockers take the key.
 *
 * <p><b>The turn.</b> Within the courtesy, the locker's turn comes back once every other locker seen lately on the
 * key has released it once since this locker did: each locker (the first 16 characters of a release id, {@link
 * Redlock#newValue}) that released the key, or was heard waiting for it ({@link #heardWaiting}), within {@link
 * #RIVALS_SEEN_COURTESIES} courtesies is a rival, and the release that makes as many rival releases as there are
 * rivals since this locker's own wakes its waiter at once, instead of at the courtesy's end; the rival releases before
 * it wake nobody here. Contended by lockers that hand the key on faster than the courtesy, the grants go round, one
 * per locker, with one woken waiter per release instead of one in every locker; a rival that stopped asking holds the
 * turn back at most until the courtesy's end, as before.
 *
 * <p><b>Waiters are rivals.</b> A locker whose waiter finds the key held says so ({@link #announcesWait}, at most
 * every half of {@link #RIVALS_SEEN_COURTESIES} courtesies per key, on the release channel). Counting only the lockers
 * seen releasing starved one that never held the key: two lockers handing it to each other by turns each woke its own
 * waiter at the other's release, ahead of, or together with, the waiter of a third that had lost the first race, and
 * the third lost every race after it. Heard waiting, the third is a rival of both: neither's turn comes before it
 * released, so at the next release its waiter tries alone.
 */
final class HandOffCourtesy {

    /** How many keys' hand-offs are remembered; an older one has long outlived any courtesy. */
    private static final int REMEMBERED_KEYS = 1024;

    /** How many recent releases of this locker's are remembered, to tell them from other lockers'. */
    private static final int REMEMBERED_RELEASES = 1024;

    /** How many rivals of one key are counted; with more, the turn comes with the courtesy's end. */
    static final int MAX_RIVALS = 64;

    /** Length of the start of a release id that names the locker (see {@link Redlock#newValue}). */
    static final int LOCKER_ID_LENGTH = 16;

    /**
     * How recently, in courtesies, another locker must have released a key to count as its rival: this locker's own
     * release of it then wakes its own waiter only after the courtesy (other lockers wait for it now), and its turn
     * waits for that locker's release. 500 ms with the 2 ms default.
     */
    static final int RIVALS_SEEN_COURTESIES = 250;

    private static final OptionalLong AT_ONCE = OptionalLong.of(0);

    private final long courtesyNanos;
    private final long rivalsSeenNanos;
    private final String lockerId;

    /**
     * Release id (see {@code release.lua}) to the {@link System#nanoTime()} of each of this locker's releases of a
     * contended lease. Its other releases are told by their id's start, {@link #lockerId}: none of its own releases is
     * taken for another locker's.
     */
    private final Map<String, Long> ownReleases = remembered(REMEMBERED_RELEASES);

    /** Redis key to what this locker knows of its hand-offs; guarded by {@link #ownReleases}, as every field here. */
    private final Map<String, Turns> keys = remembered(REMEMBERED_KEYS);

    /** A locker's courtesy; {@code lockerId} names it in release messages ({@link Redlock#lockerId}). */
    HandOffCourtesy(Duration courtesy, String lockerId) {
        this.courtesyNanos = courtesy.toNanos();
        this.rivalsSeenNanos = RIVALS_SEEN_COURTESIES * courtesyNanos;
        this.lockerId = lockerId;
    }

    /** What names this locker in release messages. */
    String lockerId() {
        return lockerId;
    }

    /**
     * Whether a waiter of this locker that just found {@code redisKey} held should tell the other lockers that this
     * one waits for it: with the courtesy on, if it has not done so for the key in the last half of the time a rival
     * is remembered (so that it stays a rival as long as its waiters keep losing).
     */
    boolean announcesWait(String redisKey) {
        if (courtesyNanos == 0) {
            return false;
        }
        long now = System.nanoTime();
        synchronized (ownReleases) {
            Turns turns = keys.computeIfAbsent(redisKey, k -> new Turns());
            if (turns.announcedAt != Turns.NEVER && now - turns.announcedAt < rivalsSeenNanos / 2) {
                return false;
            }
            turns.announcedAt = now;
            return true;
        }
    }

    /**
     * Notes that the locker {@code locker} waits for {@code redisKey}: a rival from now on, as if seen releasing it,
     * except that no release is counted towards a turn. This locker's own announcements are ignored.
     */
    void heardWaiting(String locker, String redisKey) {
        if (courtesyNanos == 0 || locker.equals(lockerId)) {
            return;
        }
        long now = System.nanoTime();
        synchronized (ownReleases) {
            keys.computeIfAbsent(redisKey, k -> new Turns()).rivalSeen(locker, now, rivalsSeenNanos);
        }
    }

    /**
     * Notes a release about to be sent, before it is: its message can reach this locker's subscription before the
     * masters' answers reach the releasing thread. Returns whether it owes the courtesy (a contended lease): an
     * acquisition of the key within it waits for its turn, which comes in the other lockers' release messages.
     */
    boolean releasing(RedisLease lease) {
        // A release of a lease that never waited owes nothing and is not remembered: heard, its id's start names
        // this locker, which is all there is to know of it (see heard). An uncontended lock and release so costs
        // no bookkeeping here.
        if (courtesyNanos > 0 && lease.waitedFor()) {
            long now = System.nanoTime();
            synchronized (ownReleases) {
                ownReleases.put(lease.releaseId(), now);
                Turns turns = keys.computeIfAbsent(lease.redisKey(), k -> new Turns());
                turns.ownReleaseAt = now;
                turns.rivalReleasesSince = 0;
                turns.turnCame = false;
            }
            return true;
        }
        return false;
    }

    /** Notes a release that a majority confirmed: an acquisition of the key that starts now owes the courtesy. */
    void released(RedisLease lease) {
        if (courtesyNanos > 0 && lease.waitedFor()) {
            long now = System.nanoTime();
            synchronized (ownReleases) {
                keys.computeIfAbsent(lease.redisKey(), k -> new Turns()).courtesyFrom = now;
            }
        }
    }

    /**
     * How long a waiting acquisition of {@code redisKey} starting now lets others try first, on a timer that the
     * locker's turn ({@link #heard}) cuts short: 0 mostly.
     */
    long delayNanos(String redisKey) {
        if (courtesyNanos == 0) {
            return 0;
        }
        long from;
        synchronized (ownReleases) {
            Turns turns = keys.get(redisKey);
            if (turns == null || turns.courtesyFrom == Turns.NEVER) {
                return 0;
            }
            from = turns.courtesyFrom;
            turns.courtesyFrom = Turns.NEVER;
        }
        return Math.max(0, courtesyNanos - (System.nanoTime() - from));
    }

    /**
     * Whether a release of {@code redisKey} heard now matters here even if nobody here waits for the key: within the
     * courtesy of this locker's own release of it, where the rival releases are counted towards its turn.
     */
    boolean follows(String redisKey) {
        if (courtesyNanos == 0) {
            return false;
        }
        long now = System.nanoTime();
        synchronized (ownReleases) {
            Turns turns = keys.get(redisKey);
            return turns != null && turns.withinCourtesy(now, courtesyNanos);
        }
    }

    /**
     * What to do with the release {@code releaseId} of {@code redisKey} just heard (its first message): empty when it
     * is another locker's and this locker's turn has not come (wake nobody here, the other lockers' waiters take it);
     * otherwise how long to hold back the wake-up of this locker's own waiter. That is what is left of the courtesy
     * when it is this locker's own release of a contended lease and another locker released the key lately, or waits
     * for it, so that the releaser's sibling threads let the other lockers' waiters try first, as the releaser itself
     * does; 0 otherwise. With no other locker releasing the key (all its waiters in this process), nothing is held back: a
     * pause would only leave it free.
     */
    OptionalLong heard(String releaseId, String redisKey) {
        if (courtesyNanos == 0) {
            return AT_ONCE;
        }
        long now = System.nanoTime();
        synchronized (ownReleases) {
            Long own = ownReleases.get(releaseId);
            if (own == null && releaseId.startsWith(lockerId)) {
                return AT_ONCE; // this locker's release of a lease that never waited: no courtesy owed
            }
            Turns turns = keys.computeIfAbsent(redisKey, k -> new Turns());
            if (own == null) {
                return turns.rivalReleased(
                                releaseId.substring(0, LOCKER_ID_LENGTH), now, courtesyNanos, rivalsSeenNanos)
                        ? AT_ONCE
                        : OptionalLong.empty();
            }
            if (turns.lastRivalAt == Turns.NEVER || now - turns.lastRivalAt > rivalsSeenNanos) {
                return AT_ONCE;
            }
            return OptionalLong.of(Math.max(0, courtesyNanos - (now - own)));
        }
    }

    /**
     * Whether this locker's turn came since its own last release of {@code redisKey}: its waiter in the courtesy may
     * attempt, and a held-back wake-up of its own waiter, due now, is no longer owed (the turn woke one).
     */
    boolean turnCame(String redisKey) {
        synchronized (ownReleases) {
            Turns turns = keys.get(redisKey);
            return turns != null && turns.turnCame;
        }
    }

    /** Whether another locker released {@code redisKey} since this locker's own last release of it. */
    boolean rivalReleasedSinceOwn(String redisKey) {
        synchronized (ownReleases) {
            Turns turns = keys.get(redisKey);
            return turns != null && turns.rivalReleasesSince > 0;
        }
    }

    private static <V> Map<String, V> remembered(int entries) {
        return new LinkedHashMap<>(64, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > entries;
            }
        };
    }

    /** One key's hand-offs as this locker saw them; {@link System#nanoTime()} readings, or {@link #NEVER}. */
    private static final class Turns {
        static final long NEVER = Long.MIN_VALUE;

        /** This locker's last release of a contended lease of the key. */
        long ownReleaseAt = NEVER;
        /** The same, once confirmed, until an acquisition takes up its courtesy. */
        long courtesyFrom = NEVER;
        /** Other lockers' releases heard since {@link #ownReleaseAt}. */
        int rivalReleasesSince;
        /** Whether one of them was this locker's turn. */
        boolean turnCame;
        /** The last time another locker was seen on the key: releasing it, or waiting for it. */
        long lastRivalAt = NEVER;
        /** Locker id to its last release of the key, or its last word that it waits, for the lockers seen lately. */
        final Map<String, Long> rivals = new HashMap<>();
        /** This locker's last word that it waits for the key ({@link #announcesWait}). */
        long announcedAt = NEVER;

        boolean withinCourtesy(long now, long courtesyNanos) {
            return ownReleaseAt != NEVER && now - ownReleaseAt < courtesyNanos;
        }

        /** Counts a release by {@code locker}; whether this locker's waiter may try for it (its turn, or no turn). */
        boolean rivalReleased(String locker, long now, long courtesyNanos, long rivalsSeenNanos) {
            rivalSeen(locker, now, rivalsSeenNanos);
            rivalReleasesSince++;
            if (!withinCourtesy(now, courtesyNanos) || turnCame) {
                return true;
            }
            turnCame = rivalReleasesSince >= rivals.size();
            return turnCame;
        }

        /** Notes {@code locker} on the key now (releasing it or waiting for it), and forgets those not seen lately. */
        void rivalSeen(String locker, long now, long rivalsSeenNanos) {
            lastRivalAt = now;
            if (rivals.size() < MAX_RIVALS || rivals.containsKey(locker)) {
                rivals.put(locker, now);
            }
            for (Iterator<Long> seen = rivals.values().iterator(); seen.hasNext(); ) {
                if (now - seen.next() > rivalsSeenNanos) {
                    seen.remove();
                }
            }
        }
    }
}
