package io.distlock.lockctl.bench;

import java.util.List;

/**
 * What one worker JVM does, written by the engine as JSON for the worker to read.
 *
 * @param mode {@code contended}, {@code uncontended}, {@code held} or {@code failover} (a candidate of the election
 *     {@code <keyPrefix>failover}, driven by the engine's lines: {@link BenchWorker})
 * @param specs the targets (one, except for {@code uncontended}, which interleaves them)
 * @param index this worker's number, from 0
 * @param threads threads taking the lock in this worker, all on its one target ({@code contended}; else 1)
 * @param acquisitions measured acquisitions per thread (per target and round for {@code uncontended}; locks kept for
 *     {@code held})
 * @param keys how many keys the acquisitions are spread over
 * @param holdNanos how long each lock is held
 * @param warmUp acquisitions on a private key before the start
 * @param contendedWarmUp acquisitions per thread on a key shared by every worker of the run, all contending at once,
 *     after the private warm-up and before the start ({@code contended} only; 0: none)
 * @param rounds rounds of the {@code uncontended} mode
 * @param workload what each acquisition takes (the lock, a side of the read-write lock, a permit)
 * @param keyPrefix prefix of every key this run uses (unique per run, so that runs never share a queue)
 * @param resultFile where the worker writes its {@link WorkerResult}
 */
record WorkerTask(
        String mode,
        List<String> specs,
        int index,
        int threads,
        int acquisitions,
        int keys,
        long holdNanos,
        int warmUp,
        int contendedWarmUp,
        int rounds,
        Workload workload,
        String keyPrefix,
        String resultFile) {

    static final String CONTENDED = "contended";
    static final String UNCONTENDED = "uncontended";
    static final String HELD = "held";
    static final String FAILOVER = "failover";
}
