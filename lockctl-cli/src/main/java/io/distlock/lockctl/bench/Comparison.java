package io.distlock.lockctl.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * One store at one process count, over all rounds: the median of each figure, and the median of the paired ratios
 * against the first store (round by round: this store's figure / the first store's figure in the same round).
 *
 * @param processes worker JVMs
 * @param threads threads per worker JVM (a {@code bench.json} written before {@code --threads} has none: 1)
 * @param store the target spec
 * @param storeIndex its position among the {@code --store}s
 * @param rounds rounds measured
 * @param acquisitionsPerSecond median over rounds
 * @param meanWaitMs median over rounds
 * @param p99WaitMs median over rounds
 * @param maxWaitMs median over rounds
 * @param handOffsPerSecond median over rounds
 * @param meanHandOffMs median over rounds
 * @param jain median over rounds
 * @param storeRequestsPerAcquisition median over rounds, null if not counted
 * @param cpuMsPerAcquisition median over rounds
 * @param rateRatio median paired ratio of acquisitions per second (above 1: faster than the first store)
 * @param rateRatioMin smallest paired ratio of acquisitions per second
 * @param rateRatioMax largest paired ratio of acquisitions per second
 * @param meanWaitRatio median paired ratio of mean waits (below 1: shorter waits than the first store)
 * @param maxWaitRatio median paired ratio of max waits
 * @param cpuRatio median paired ratio of CPU per acquisition
 * @param readsPerSecond median over rounds of read-side grants per second ({@code read-heavy}; else null)
 * @param writesPerSecond median over rounds of write-side grants per second ({@code read-heavy}; else null)
 * @param readRatio median paired ratio of reads per second ({@code read-heavy}; else null)
 * @param writeRatio median paired ratio of writes per second ({@code read-heavy}; else null)
 * @param mostHeldAtOnce the most holds of one key seen at one instant in any round
 * @param violations grants that broke the workload's rule, summed over rounds (0 for a correct lock)
 */
public record Comparison(
        int processes,
        int threads,
        String store,
        int storeIndex,
        int rounds,
        double acquisitionsPerSecond,
        double meanWaitMs,
        double p99WaitMs,
        double maxWaitMs,
        double handOffsPerSecond,
        double meanHandOffMs,
        double jain,
        Double storeRequestsPerAcquisition,
        double cpuMsPerAcquisition,
        double rateRatio,
        double rateRatioMin,
        double rateRatioMax,
        double meanWaitRatio,
        double maxWaitRatio,
        double cpuRatio,
        Double readsPerSecond,
        Double writesPerSecond,
        Double readRatio,
        Double writeRatio,
        int mostHeldAtOnce,
        int violations) {

    /** Reads a {@code bench.json} written before {@code --threads}, which has no {@code threads}, as one thread. */
    public Comparison {
        threads = Math.max(threads, 1);
    }

    /** The comparisons of every store at every process count among {@code runs}. */
    public static List<Comparison> of(List<RunSummary> runs, List<String> stores, List<Integer> processCounts) {
        List<Comparison> out = new ArrayList<>();
        for (int p : processCounts) {
            List<RunSummary> base = select(runs, 0, p);
            for (int s = 0; s < stores.size(); s++) {
                List<RunSummary> mine = select(runs, s, p);
                if (mine.isEmpty()) {
                    continue;
                }
                List<Double> rate = ratios(mine, base, RunSummary::acquisitionsPerSecond);
                Double requests = mine.get(0).storeRequestsPerAcquisition() == null
                        ? null
                        : median(mine, r -> r.storeRequestsPerAcquisition());
                out.add(new Comparison(
                        p,
                        mine.get(0).threads(),
                        stores.get(s),
                        s,
                        mine.size(),
                        median(mine, RunSummary::acquisitionsPerSecond),
                        median(mine, RunSummary::meanWaitMs),
                        median(mine, RunSummary::p99WaitMs),
                        median(mine, RunSummary::maxWaitMs),
                        median(mine, RunSummary::handOffsPerSecond),
                        median(mine, RunSummary::meanHandOffMs),
                        median(mine, RunSummary::jain),
                        requests,
                        median(mine, RunSummary::cpuMsPerAcquisition),
                        Stats.median(rate),
                        rate.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                        rate.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN),
                        Stats.median(ratios(mine, base, RunSummary::meanWaitMs)),
                        Stats.median(ratios(mine, base, RunSummary::maxWaitMs)),
                        Stats.median(ratios(mine, base, RunSummary::cpuMsPerAcquisition)),
                        perSide(mine, RunSummary::readsPerSecond),
                        perSide(mine, RunSummary::writesPerSecond),
                        perSideRatio(mine, base, RunSummary::readsPerSecond),
                        perSideRatio(mine, base, RunSummary::writesPerSecond),
                        mine.stream().mapToInt(RunSummary::mostHeldAtOnce).max().orElse(0),
                        mine.stream().mapToInt(RunSummary::violations).sum()));
            }
        }
        return out;
    }

    /** The median of a per-side rate, or null where the runs have none (not a read-write workload). */
    private static Double perSide(List<RunSummary> runs, Function<RunSummary, Double> figure) {
        if (runs.stream().anyMatch(r -> figure.apply(r) == null)) {
            return null;
        }
        return median(runs, r -> figure.apply(r));
    }

    /** The median paired ratio of a per-side rate, or null where either store's runs have none. */
    private static Double perSideRatio(
            List<RunSummary> mine, List<RunSummary> base, Function<RunSummary, Double> figure) {
        if (perSide(mine, figure) == null || perSide(base, figure) == null) {
            return null;
        }
        return Stats.median(ratios(mine, base, r -> figure.apply(r)));
    }

    private static List<RunSummary> select(List<RunSummary> runs, int store, int processes) {
        return runs.stream()
                .filter(r -> r.storeIndex() == store && r.processes() == processes)
                .toList();
    }

    private static double median(List<RunSummary> runs, ToDoubleFunction<RunSummary> figure) {
        return Stats.median(runs.stream().map(r -> figure.applyAsDouble(r)).toList());
    }

    /** Round by round: figure(mine) / figure(base) of the same round. */
    private static List<Double> ratios(
            List<RunSummary> mine, List<RunSummary> base, ToDoubleFunction<RunSummary> figure) {
        List<Double> out = new ArrayList<>();
        for (RunSummary m : mine) {
            for (RunSummary b : base) {
                if (b.round() == m.round() && figure.applyAsDouble(b) != 0) {
                    out.add(figure.applyAsDouble(m) / figure.applyAsDouble(b));
                }
            }
        }
        return out;
    }
}
