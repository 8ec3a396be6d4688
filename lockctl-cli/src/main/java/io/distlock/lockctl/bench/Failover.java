package io.distlock.lockctl.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The figures of {@code --workload failover}: how long an election goes without a leader when its leader steps down
 * ({@value #STEP_DOWN}) or its JVM is killed with SIGKILL ({@value #KILL}), per store and kind of round.
 */
public final class Failover {

    /** A clean round: the leader steps down; from that call to the next leader's first "you lead". */
    public static final String STEP_DOWN = "step-down";
    /** A crash round: the leader's JVM is killed with SIGKILL; from the kill to the next leader's first "you lead". */
    public static final String KILL = "kill";

    private Failover() {}

    /**
     * One measured hand-over.
     *
     * @param store the target spec
     * @param storeIndex its position among the {@code --store}s
     * @param kind {@value #STEP_DOWN} or {@value #KILL}
     * @param round from 1
     * @param millis from the step-down call or the kill to the next leader's first "you lead", on the host's monotonic
     *     clock
     * @param from the worker that led (its number in the run)
     * @param to the worker that led next
     */
    public record Run(String store, int storeIndex, String kind, int round, double millis, int from, int to) {}

    /**
     * One store's hand-overs of one kind.
     *
     * @param store the target spec
     * @param storeIndex its position among the {@code --store}s
     * @param kind {@value #STEP_DOWN} or {@value #KILL}
     * @param rounds how many were measured
     * @param medianMs the median
     * @param p99Ms the 99th percentile by the nearest rank (up to 100 rounds, the longest)
     * @param maxMs the longest
     * @param ratio the median of the paired ratios (this store's hand-over / the first store's, round by round; below
     *     1: faster than the first store), null for the first store
     * @param ratioMin the smallest paired ratio, null for the first store
     * @param ratioMax the largest paired ratio, null for the first store
     */
    public record Summary(
            String store,
            int storeIndex,
            String kind,
            int rounds,
            double medianMs,
            double p99Ms,
            double maxMs,
            Double ratio,
            Double ratioMin,
            Double ratioMax) {}

    /** Per store (in {@code stores} order) and kind (step-down first), the summary of {@code runs}. */
    public static List<Summary> summarize(List<String> stores, List<Run> runs) {
        List<Summary> summaries = new ArrayList<>();
        for (int s = 0; s < stores.size(); s++) {
            for (String kind : List.of(STEP_DOWN, KILL)) {
                List<Run> mine = of(runs, s, kind);
                if (mine.isEmpty()) {
                    continue;
                }
                long[] nanos = Stats.sorted(mine.stream()
                        .mapToLong(r -> Math.round(r.millis() * 1e6))
                        .toArray());
                List<Double> ratios = new ArrayList<>();
                if (s > 0) {
                    List<Run> first = of(runs, 0, kind);
                    for (Run r : mine) {
                        first.stream()
                                .filter(f -> f.round() == r.round() && f.millis() > 0)
                                .findFirst()
                                .ifPresent(f -> ratios.add(r.millis() / f.millis()));
                    }
                }
                boolean paired = !ratios.isEmpty();
                summaries.add(new Summary(
                        stores.get(s),
                        s,
                        kind,
                        mine.size(),
                        Stats.millis(Stats.quantile(nanos, 0.5)),
                        Stats.millis(Stats.quantile(nanos, 0.99)),
                        Stats.millis(nanos[nanos.length - 1]),
                        paired ? Stats.median(ratios) : null,
                        paired ? ratios.stream().min(Double::compare).orElseThrow() : null,
                        paired ? ratios.stream().max(Double::compare).orElseThrow() : null));
            }
        }
        return summaries;
    }

    private static List<Run> of(List<Run> runs, int storeIndex, String kind) {
        return runs.stream()
                .filter(r -> r.storeIndex() == storeIndex && r.kind().equals(kind))
                .toList();
    }
}
