package io.distlock.lockctl.bench;

import java.util.List;

/**
 * Everything one {@code lockctl bench} measured, as written to {@code bench.json}.
 *
 * @param command the command line that reproduces it
 * @param environment Java version, cores, load average at the start
 * @param stores the targets, in {@code --store} order (ratios are against the first)
 * @param comparisons contended figures per process count and store: medians and paired ratios
 * @param uncontended uncontended figures per store (empty unless {@code --mode uncontended})
 * @param heapPerHeldLockBytes client heap per held lock per store (empty unless {@code --held N})
 * @param runs every contended run with its raw per-acquisition data
 * @param workload what each acquisition took (the lock workload in a {@code bench.json} written before workloads)
 */
public record BenchReport(
        String command,
        String environment,
        List<String> stores,
        List<Comparison> comparisons,
        List<UncontendedSummary> uncontended,
        List<HeldSummary> heapPerHeldLockBytes,
        List<RunData> runs,
        Workload workload) {

    /** Reads a {@code bench.json} written before workloads as the lock workload. */
    public BenchReport {
        workload = workload == null ? Workload.LOCK : workload;
    }

    /**
     * Client heap per held lock (per held read or permit in those workloads).
     *
     * @param store the target spec
     * @param held locks (reads, permits) held by one locker, one per key
     * @param bytesPerLock heap growth / held
     */
    public record HeldSummary(String store, int held, double bytesPerLock) {}
}
