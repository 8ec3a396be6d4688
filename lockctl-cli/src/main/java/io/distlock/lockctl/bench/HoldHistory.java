package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The check of a contended run's history: every hold stamped from its grant to the start of its release on the host's
 * one monotonic clock, so a stamped hold lies within the real one and two stamped holds that overlap really did. On
 * each key, an exclusive hold (a lock, a write) overlaps no other hold, and shared holds (reads, permits) number at
 * most the workload's limit at once (reads: no limit; permits: the semaphore's permits).
 *
 * @param violations grants that broke that rule
 * @param firstViolation the earliest of them in words, or null
 * @param mostHeldAtOnce the most holds of one key at one instant (several readers or permits seen sharing it: above 1)
 */
record HoldHistory(int violations, String firstViolation, int mostHeldAtOnce) {

    /** One hold: on {@code key}, of {@code kind}, by {@code process}'s {@code thread}, stamped in nanoseconds. */
    record Hold(long grant, long release, int process, int thread, int key, LockKind kind) {}

    /**
     * Checks {@code holds} against {@code workload}'s rule.
     *
     * @param start the run's start, the origin of the times in {@link #firstViolation}
     */
    static HoldHistory check(List<Hold> holds, Workload workload, long start) {
        int limit = workload.sharedLimit();
        Map<Integer, List<long[]>> byKey = new HashMap<>(); // time, +1 grant or -1 release, index of the hold
        for (int i = 0; i < holds.size(); i++) {
            Hold h = holds.get(i);
            List<long[]> points = byKey.computeIfAbsent(h.key(), k -> new ArrayList<>());
            points.add(new long[] {h.grant(), 1, i});
            points.add(new long[] {h.release(), -1, i});
        }
        int violations = 0;
        Hold first = null;
        String firstText = null;
        int most = 0;
        for (List<long[]> points : byKey.values()) {
            // at one instant, releases before grants: a release stamp precedes the release, a grant stamp follows it
            points.sort(Comparator.<long[]>comparingLong(p -> p[0]).thenComparingLong(p -> p[1]));
            int shared = 0;
            int exclusive = 0;
            for (long[] p : points) {
                Hold h = holds.get((int) p[2]);
                boolean isExclusive = h.kind() == null || h.kind().exclusive();
                if (p[1] < 0) {
                    if (isExclusive) {
                        exclusive--;
                    } else {
                        shared--;
                    }
                    continue;
                }
                boolean broken = isExclusive ? shared + exclusive > 0 : exclusive > 0 || shared + 1 > limit;
                if (broken) {
                    violations++;
                    if (first == null || h.grant() < first.grant()) {
                        first = h;
                        firstText = String.format(
                                Locale.ROOT,
                                "at %.3f ms a %s of key %d was granted to process %d thread %d while %d shared and %d"
                                        + " exclusive hold(s) of it were held (%s allows %s)",
                                Stats.millis(h.grant() - start),
                                label(h.kind()),
                                h.key(),
                                h.process(),
                                h.thread(),
                                shared,
                                exclusive,
                                workload.name(),
                                isExclusive ? "no other hold beside it" : allowed(workload, limit));
                    }
                }
                if (isExclusive) {
                    exclusive++;
                } else {
                    shared++;
                }
                most = Math.max(most, shared + exclusive);
            }
        }
        return new HoldHistory(violations, firstText, most);
    }

    private static String label(LockKind kind) {
        return kind == null ? "lock" : kind.label();
    }

    private static String allowed(Workload workload, int limit) {
        return limit == Integer.MAX_VALUE
                ? "any number of reads, no write beside them"
                : "at most " + limit + " at once, no exclusive hold beside them";
    }
}
