package io.distlock.lockctl.bench;

import java.util.Arrays;
import java.util.List;

/** Order statistics and Jain's index, in the units given. */
final class Stats {

    private Stats() {}

    static double mean(long[] values) {
        double sum = 0;
        for (long v : values) {
            sum += v;
        }
        return values.length == 0 ? Double.NaN : sum / values.length;
    }

    /** The {@code q}-quantile (0..1) by the nearest-rank method. */
    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }

    static long[] sorted(long[] values) {
        long[] copy = values.clone();
        Arrays.sort(copy);
        return copy;
    }

    /** The median of {@code values}, NaN if there are none. */
    static double median(List<Double> values) {
        double[] v = values.stream()
                .filter(d -> d != null && !d.isNaN())
                .mapToDouble(Double::doubleValue)
                .sorted()
                .toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal, 1/n when one gets everything. */
    static double jain(double[] x) {
        double sum = 0;
        double squares = 0;
        for (double v : x) {
            sum += v;
            squares += v * v;
        }
        return squares == 0 ? 1 : sum * sum / (x.length * squares);
    }

    static double millis(double nanos) {
        return nanos / 1e6;
    }
}
