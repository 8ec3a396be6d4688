package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import java.util.List;

/**
 * What a worker measured. Times are {@link System#nanoTime()} readings, one monotonic clock for every JVM on the host.
 *
 * @param index the worker's number
 * @param attemptNanos per acquisition: when the attempt started ({@code contended})
 * @param grantNanos per acquisition: when the lock was granted ({@code contended})
 * @param releaseNanos per acquisition: when the holder started releasing ({@code contended})
 * @param keyIndex per acquisition: which of the run's keys it took, from 0 ({@code contended})
 * @param thread per acquisition: which of the worker's threads took it, from 0 ({@code contended})
 * @param kinds per acquisition: what it took, the lock, a side of the read-write lock or a permit ({@code contended};
 *     null: the lock every time)
 * @param latencyNanos per round and target: acquire + release times ({@code uncontended})
 * @param storeRequests per target: store requests during the measured part, or -1 if the target does not count them
 * @param cpuNanos the worker JVM's CPU time (user + system, all its threads) during the measured part
 * @param peakRssBytes the worker JVM's peak resident set size ({@code VmHWM}), or -1 where unknown
 * @param heapPerLockBytes client heap per held lock ({@code held}), else 0
 * @param threadCpu the worker's thread groups during the measured part, the largest CPU first ({@code contended}; empty
 *     where not known)
 */
record WorkerResult(
        int index,
        long[] attemptNanos,
        long[] grantNanos,
        long[] releaseNanos,
        int[] keyIndex,
        int[] thread,
        LockKind[] kinds,
        long[][][] latencyNanos,
        long[] storeRequests,
        long cpuNanos,
        long peakRssBytes,
        double heapPerLockBytes,
        List<ThreadCpu> threadCpu) {

    WorkerResult {
        threadCpu = threadCpu == null ? List.of() : threadCpu;
    }

    /** A result without per-acquisition stamps or thread groups ({@code uncontended} and {@code held}). */
    static WorkerResult unstamped(
            int index,
            long[][][] latencyNanos,
            long[] storeRequests,
            long cpuNanos,
            long peakRssBytes,
            double heapPerLockBytes) {
        return new WorkerResult(
                index,
                null,
                null,
                null,
                null,
                null,
                null,
                latencyNanos,
                storeRequests,
                cpuNanos,
                peakRssBytes,
                heapPerLockBytes,
                List.of());
    }
}
