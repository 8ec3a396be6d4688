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
 * @param failover {@code --workload failover}: per store and kind of round, median, p99, max and paired ratios (else
 *     empty)
 * @param failoverRuns {@code --workload failover}: every measured hand-over (else empty)
 */
public record BenchReport(
        String command,
        String environment,
        List<String> stores,
        List<Comparison> comparisons,
        List<UncontendedSummary> uncontended,
        List<HeldSummary> heapPerHeldLockBytes,
        List<RunData> runs,
        Workload workload,
        List<Failover.Summary> failover,
        List<Failover.Run> failoverRuns) {

    /** Reads a {@code bench.json} written before workloads as the lock workload, one written before failover as none. */
    public BenchReport {
        workload = workload == null ? Workload.LOCK : workload;
        failover = failover == null ? List.of() : failover;
        failoverRuns = failoverRuns == null ? List.of() : failoverRuns;
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
