package io.distlock.lockctl.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Acquire + release of a free lock, targets interleaved acquisition by acquisition in one JVM.
 *
 * @param store the target spec
 * @param storeIndex its position among the {@code --store}s
 * @param meanMs median over rounds of the round's mean
 * @param p50Ms median over all acquisitions
 * @param p99Ms 99th percentile over all acquisitions
 * @param maxMs longest
 * @param ratio median over rounds of (this store's mean / the first store's mean) in the same round
 * @param storeRequestsPerAcquisition store round trips per acquire + release, null if not counted
 */
public record UncontendedSummary(
        String store,
        int storeIndex,
        double meanMs,
        double p50Ms,
        double p99Ms,
        double maxMs,
        double ratio,
        Double storeRequestsPerAcquisition) {

    /** The summaries of every target from the uncontended worker's result. */
    static List<UncontendedSummary> of(List<String> stores, WorkerResult result) {
        long[][][] latency = result.latencyNanos();
        int rounds = latency.length;
        List<UncontendedSummary> out = new ArrayList<>();
        for (int s = 0; s < stores.size(); s++) {
            List<Double> means = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            int n = latency[0][s].length;
            long[] all = new long[rounds * n];
            for (int r = 0; r < rounds; r++) {
                double mine = Stats.mean(latency[r][s]);
                means.add(mine);
                ratios.add(mine / Stats.mean(latency[r][0]));
                System.arraycopy(latency[r][s], 0, all, r * n, n);
            }
            long[] sorted = Stats.sorted(all);
            long requests = result.storeRequests()[s];
            out.add(new UncontendedSummary(
                    stores.get(s),
                    s,
                    Stats.millis(Stats.median(means)),
                    Stats.millis(Stats.quantile(sorted, 0.5)),
                    Stats.millis(Stats.quantile(sorted, 0.99)),
                    Stats.millis(sorted[sorted.length - 1]),
                    Stats.median(ratios),
                    requests < 0 ? null : (double) requests / all.length));
        }
        return out;
    }
}
