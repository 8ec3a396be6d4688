package io.distlock.lockctl.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongConsumer;

/**
 * Seed 000's experiment (section 6) for any target: P worker JVMs take one key N times each, started together after a
 * warm-up; every wait and every grant is stamped on the host's monotonic clock, common to all the JVMs.
 */
public final class Engine {

    private static final long READY_TIMEOUT_MILLIS = 120_000;
    private static final long START_DELAY_NANOS = 200_000_000;

    private final Path workDir;
    private final int acquisitions;
    private final int keys;
    private final long holdNanos;
    private final int warmUp;
    private final boolean flightRecorder;

    /**
     * @param workDir where task files, results and worker logs go
     * @param acquisitions per process (contended), per target and round (uncontended), or locks kept (held)
     * @param keys how many keys the acquisitions are spread over
     * @param holdNanos how long each lock is held
     * @param warmUp acquisitions on a private key before the start
     * @param flightRecorder record every worker JVM with JDK Flight Recorder ({@code <workDir>/<worker>.jfr})
     */
    public Engine(Path workDir, int acquisitions, int keys, long holdNanos, int warmUp, boolean flightRecorder) {
        this.workDir = workDir;
        this.acquisitions = acquisitions;
        this.keys = keys;
        this.holdNanos = holdNanos;
        this.warmUp = warmUp;
        this.flightRecorder = flightRecorder;
    }

    /**
     * One contended run.
     *
     * @param progress told the total of acquisitions done so far in this run, now and then
     * @throws BenchException if a worker fails (its log is named)
     */
    public RunData contended(String spec, int storeIndex, int round, int processes, LongConsumer progress)
            throws IOException, InterruptedException {
        String name = "r" + round + "-s" + storeIndex + "-p" + processes;
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        List<WorkerTask> tasks = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            tasks.add(new WorkerTask(
                    WorkerTask.CONTENDED,
                    List.of(spec),
                    i,
                    acquisitions,
                    keys,
                    holdNanos,
                    warmUp,
                    1,
                    prefix,
                    workDir.resolve(name + "-w" + i + ".result.json").toString()));
        }
        List<WorkerResult> results = runWorkers(tasks, name, progress);
        return summarize(spec, storeIndex, round, keys, results);
    }

    /**
     * The uncontended mode: one worker JVM interleaves the targets acquisition by acquisition.
     *
     * @return per target: acquire + release times, the paired ratios against the first, the store requests
     */
    public List<UncontendedSummary> uncontended(List<String> specs, int rounds, LongConsumer progress)
            throws IOException, InterruptedException {
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        WorkerTask task = new WorkerTask(
                WorkerTask.UNCONTENDED,
                specs,
                0,
                acquisitions,
                keys,
                holdNanos,
                warmUp,
                rounds,
                prefix,
                workDir.resolve("uncontended.result.json").toString());
        return UncontendedSummary.of(
                specs, runWorkers(List.of(task), "uncontended", progress).get(0));
    }

    /**
     * Client heap per held lock with {@code held} locks held by one locker of {@code spec}, in bytes; the worker's log
     * and result are {@code held-s<storeIndex>-w0.*} in the work directory.
     */
    public double heapPerHeldLock(String spec, int storeIndex, int held, LongConsumer progress)
            throws IOException, InterruptedException {
        String name = "held-s" + storeIndex; // one log and result per store
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        WorkerTask task = new WorkerTask(
                WorkerTask.HELD,
                List.of(spec),
                0,
                held,
                1,
                0,
                warmUp,
                1,
                prefix,
                workDir.resolve(name + "-w0.result.json").toString());
        return runWorkers(List.of(task), name, progress).get(0).heapPerLockBytes();
    }

    private List<WorkerResult> runWorkers(List<WorkerTask> tasks, String name, LongConsumer progress)
            throws IOException, InterruptedException {
        List<WorkerProcess> workers = new ArrayList<>();
        try {
            for (WorkerTask task : tasks) {
                workers.add(WorkerProcess.start(task, workDir, name + "-w" + task.index(), flightRecorder));
            }
            for (WorkerProcess w : workers) {
                w.awaitReady(READY_TIMEOUT_MILLIS);
            }
            long start = System.nanoTime() + START_DELAY_NANOS;
            for (WorkerProcess w : workers) {
                w.go(start);
            }
            for (WorkerProcess w : workers) {
                while (!w.awaitFinished(200)) {
                    progress.accept(
                            workers.stream().mapToLong(WorkerProcess::progress).sum());
                }
            }
            progress.accept(workers.stream().mapToLong(WorkerProcess::progress).sum());
            List<WorkerResult> results = new ArrayList<>();
            for (WorkerProcess w : workers) {
                results.add(w.result());
            }
            return results;
        } finally {
            workers.forEach(WorkerProcess::close);
        }
    }

    /** The figures of one contended run from its workers' raw data. */
    static RunData summarize(String spec, int storeIndex, int round, int keys, List<WorkerResult> results) {
        int p = results.size();
        long start = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        for (WorkerResult r : results) {
            start = Math.min(start, r.attemptNanos()[0]);
            end = Math.max(end, r.releaseNanos()[r.releaseNanos().length - 1]);
        }
        int total = results.stream().mapToInt(r -> r.grantNanos().length).sum();
        long[] waits = new long[total];
        List<double[]> grantMs = new ArrayList<>();
        List<double[]> waitMs = new ArrayList<>();
        List<long[]> events = new ArrayList<>(); // grant, release, process, key
        int at = 0;
        for (WorkerResult r : results) {
            int n = r.grantNanos().length;
            double[] g = new double[n];
            double[] w = new double[n];
            for (int i = 0; i < n; i++) {
                long wait = r.grantNanos()[i] - r.attemptNanos()[i];
                waits[at++] = wait;
                g[i] = Stats.millis(r.grantNanos()[i] - start);
                w[i] = Stats.millis(wait);
                events.add(new long[] {r.grantNanos()[i], r.releaseNanos()[i], r.index(), r.keyIndex()[i]});
            }
            grantMs.add(g);
            waitMs.add(w);
        }
        long[] sorted = Stats.sorted(waits);
        double seconds = (end - start) / 1e9;

        // hand-offs: consecutive grants of one key to different processes
        events.sort(Comparator.comparingLong(e -> e[0]));
        Map<Long, long[]> previous = new HashMap<>();
        int handOffs = 0;
        double handOffNanos = 0;
        int[] perKey = new int[keys];
        int[] handOffsPerKey = new int[keys];
        for (long[] e : events) {
            perKey[(int) e[3]]++;
            long[] prev = previous.put(e[3], e);
            if (prev != null && prev[2] != e[2]) {
                handOffs++;
                handOffsPerKey[(int) e[3]]++;
                handOffNanos += Math.max(0, e[0] - prev[1]);
            }
        }
        // fairness: grants per process while every process was still taking the lock
        long firstDone = Long.MAX_VALUE;
        for (WorkerResult r : results) {
            firstDone = Math.min(firstDone, r.grantNanos()[r.grantNanos().length - 1]);
        }
        double[] shares = new double[p];
        for (int i = 0; i < p; i++) {
            final long cut = firstDone;
            shares[i] = Arrays.stream(results.get(i).grantNanos())
                    .filter(t -> t <= cut)
                    .count();
        }
        long requests = 0;
        boolean counted = true;
        for (WorkerResult r : results) {
            if (r.storeRequests()[0] < 0) {
                counted = false;
            }
            requests += r.storeRequests()[0];
        }
        double cpu = results.stream().mapToLong(WorkerResult::cpuNanos).sum();
        RunSummary summary = new RunSummary(
                spec,
                storeIndex,
                round,
                p,
                total,
                seconds,
                Stats.millis(Stats.mean(waits)),
                Stats.millis(Stats.quantile(sorted, 0.50)),
                Stats.millis(Stats.quantile(sorted, 0.99)),
                Stats.millis(sorted[sorted.length - 1]),
                total / seconds,
                handOffs / seconds,
                handOffs == 0 ? 0 : Stats.millis(handOffNanos / handOffs),
                Stats.jain(shares),
                counted ? (double) requests / total : null,
                Stats.millis(cpu / total),
                results.stream().map(r -> r.cpuNanos() / 1e9).toList(),
                results.stream()
                        .map(r -> r.peakRssBytes() < 0 ? null : r.peakRssBytes() / (1024.0 * 1024.0))
                        .toList(),
                keys,
                Arrays.stream(perKey).boxed().toList(),
                Arrays.stream(handOffsPerKey).boxed().toList());
        return new RunData(summary, grantMs, waitMs);
    }
}
