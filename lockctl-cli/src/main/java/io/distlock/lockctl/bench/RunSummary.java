package io.distlock.lockctl.bench;

import java.util.List;

/**
 * The figures of one contended run: P worker JVMs of T threads each, N acquisitions per thread, one target. A party is
 * one thread of one process.
 *
 * @param store the target spec
 * @param storeIndex its position among the {@code --store}s (ratios are against 0)
 * @param round the round, from 1
 * @param processes worker JVMs
 * @param threads threads per worker JVM, all on its one target ({@code --threads}; a {@code bench.json} written before
 *     the option has none: 1)
 * @param acquisitions acquisitions in all (P x T x N)
 * @param seconds from the common start to the last release
 * @param meanWaitMs mean wait (attempt to grant)
 * @param p50WaitMs median wait
 * @param p99WaitMs 99th percentile wait
 * @param maxWaitMs longest wait
 * @param acquisitionsPerSecond acquisitions / seconds
 * @param handOffsPerSecond grants that passed the key from one process to another, per second
 * @param threadHandOffsPerSecond grants that passed the key from one thread to another of the same process, per second
 * @param meanHandOffMs mean time from a holder starting its release to the next process's grant on that key
 * @param jain Jain's index over the parties' grants (P x T of them) while all of them were still taking the lock
 * @param storeRequestsPerAcquisition store round trips per acquisition (acquire + release), null if not counted
 * @param cpuMsPerAcquisition the workers' CPU time (all threads, measured part only) per acquisition
 * @param workerCpuSeconds each worker's CPU time
 * @param workerPeakRssMiB each worker's peak RSS
 * @param keys how many keys the acquisitions were spread over ({@code --keys})
 * @param acquisitionsPerKey per key: acquisitions that took it, as the workers reported them
 * @param handOffsPerKey per key: grants that passed it from one process to another
 * @param cpuByThread where {@code cpuMsPerAcquisition} went: the workers' thread groups ({@link ThreadCpu}), the
 *     largest first; empty where not known (not Linux, or a {@code bench.json} written before it)
 * @param workload what each acquisition took ({@link Workload#name()}; {@code lock} in a {@code bench.json} written
 *     before workloads)
 * @param readsPerSecond read-side grants per second ({@code read-heavy}; else null)
 * @param writesPerSecond write-side grants per second ({@code read-heavy}; else null)
 * @param mostHeldAtOnce the most holds of one key seen at one instant (above 1: readers or permits really shared it;
 *     0 in a {@code bench.json} written before it)
 * @param violations grants that broke the workload's rule in the run's history (an exclusive hold beside another, more
 *     shared holds than the limit): 0 for a correct lock
 * @param firstViolation the earliest violation in words, or null
 */
public record RunSummary(
        String store,
        int storeIndex,
        int round,
        int processes,
        int threads,
        int acquisitions,
        double seconds,
        double meanWaitMs,
        double p50WaitMs,
        double p99WaitMs,
        double maxWaitMs,
        double acquisitionsPerSecond,
        double handOffsPerSecond,
        double threadHandOffsPerSecond,
        double meanHandOffMs,
        double jain,
        Double storeRequestsPerAcquisition,
        double cpuMsPerAcquisition,
        List<Double> workerCpuSeconds,
        List<Double> workerPeakRssMiB,
        int keys,
        List<Integer> acquisitionsPerKey,
        List<Integer> handOffsPerKey,
        List<ThreadShare> cpuByThread,
        String workload,
        Double readsPerSecond,
        Double writesPerSecond,
        int mostHeldAtOnce,
        int violations,
        String firstViolation) {

    /**
     * Reads a {@code bench.json} written before {@code --threads}, which has no {@code threads}, as one thread, one
     * written before {@code cpuByThread} as none known, and one written before workloads as the lock workload.
     */
    public RunSummary {
        threads = Math.max(threads, 1);
        cpuByThread = cpuByThread == null ? List.of() : List.copyOf(cpuByThread);
        workload = workload == null ? Workload.LOCK_NAME : workload;
    }

    /**
     * One group of the workers' threads (named alike but for their digits, in every worker together) per acquisition.
     *
     * @param threads the group's name, every run of digits written {@code N}
     * @param cpuMsPerAcquisition its CPU time per acquisition; the groups add up to about the run's {@code
     *     cpuMsPerAcquisition}, less what threads that ended during the run used
     * @param switchesPerAcquisition its voluntary context switches per acquisition: about how often its threads were
     *     woken
     * @param allocatedBytesPerAcquisition the heap its Java threads allocated per acquisition (0 in a {@code
     *     bench.json} written before it)
     */
    public record ThreadShare(
            String threads,
            double cpuMsPerAcquisition,
            double switchesPerAcquisition,
            double allocatedBytesPerAcquisition) {}
}
