package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import io.distlock.spi.Redaction;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongConsumer;
import java.util.function.Predicate;

/**
 * Seed 000's experiment (section 6) for any target: P worker JVMs of T threads each take one key N times per thread,
 * started together after a warm-up; every wait and every grant is stamped on the host's monotonic clock, common to
 * all the JVMs. A party is one thread of one worker (worker w's thread t is party {@code w * T + t}).
 */
public final class Engine {

    private static final long READY_TIMEOUT_MILLIS = 120_000;
    private static final long START_DELAY_NANOS = 200_000_000;

    private final Path workDir;
    private final int acquisitions;
    private final int keys;
    private final long holdNanos;
    private final int warmUp;
    private final int contendedWarmUp;
    private final boolean flightRecorder;
    private final Workload workload;

    /**
     * @param workDir where task files, results and worker logs go
     * @param acquisitions per thread (contended), per target and round (uncontended), or locks kept (held)
     * @param keys how many keys the acquisitions are spread over
     * @param holdNanos how long each lock is held
     * @param warmUp acquisitions on a private key before the start
     * @param contendedWarmUp contended runs: acquisitions per thread on a key shared by all the run's workers, all
     *     started together after the private warm-up, so that the wait path is compiled too before the start (0: none)
     * @param flightRecorder record every worker JVM with JDK Flight Recorder ({@code <workDir>/<worker>.jfr})
     * @param workload what each acquisition takes: the lock, a side of the read-write lock or a permit
     */
    public Engine(
            Path workDir,
            int acquisitions,
            int keys,
            long holdNanos,
            int warmUp,
            int contendedWarmUp,
            boolean flightRecorder,
            Workload workload) {
        this.workDir = workDir;
        this.acquisitions = acquisitions;
        this.keys = keys;
        this.holdNanos = holdNanos;
        this.warmUp = warmUp;
        this.contendedWarmUp = contendedWarmUp;
        this.flightRecorder = flightRecorder;
        this.workload = workload;
    }

    /**
     * One contended run.
     *
     * @param threads threads per worker JVM, all on the worker's one target
     * @param progress told the total of acquisitions done so far in this run, now and then
     * @throws BenchException if a worker fails (its log is named)
     */
    public RunData contended(String spec, int storeIndex, int round, int processes, int threads, LongConsumer progress)
            throws IOException, InterruptedException {
        String name = "r" + round + "-s" + storeIndex + "-p" + processes;
        String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        List<WorkerTask> tasks = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            tasks.add(new WorkerTask(
                    WorkerTask.CONTENDED,
                    List.of(spec),
                    i,
                    threads,
                    acquisitions,
                    keys,
                    holdNanos,
                    warmUp,
                    contendedWarmUp,
                    1,
                    workload,
                    prefix,
                    workDir.resolve(name + "-w" + i + ".result.json").toString()));
        }
        List<WorkerResult> results = runWorkers(tasks, name, progress);
        return summarize(spec, storeIndex, round, keys, threads, workload, results);
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
                1,
                acquisitions,
                keys,
                holdNanos,
                warmUp,
                0,
                rounds,
                Workload.LOCK,
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
                1,
                held,
                1,
                0,
                warmUp,
                0,
                1,
                workload,
                prefix,
                workDir.resolve(name + "-w0.result.json").toString());
        return runWorkers(List.of(task), name, progress).get(0).heapPerLockBytes();
    }

    /**
     * {@code --workload failover}: per target, an election of {@code candidates} worker JVMs; after {@link #warmUp}
     * unrecorded step-downs, {@code failovers} rounds of each kind, the targets alternated hand-over by hand-over (each
     * round: a step-down on every target, then a kill on every target). A step-down is timed from the leader's call
     * (stamped in its JVM) to the next leader's first "you lead" (stamped in that JVM), a kill from just before the
     * engine's SIGKILL of the leader's JVM; every stamp is a {@link System#nanoTime()} reading, checked to be the
     * engine's own clock when each worker starts. A killed worker is replaced by a fresh one, queued before the next
     * round, so that every round has {@code candidates} candidates.
     *
     * @param progress told the hand-overs measured so far
     * @throws BenchException if a worker fails, its clock is not the engine's, or no candidate leads within {@link
     *     #LEAD_TIMEOUT_NANOS}
     */
    public List<Failover.Run> failover(List<String> specs, int failovers, int candidates, LongConsumer progress)
            throws IOException, InterruptedException {
        List<Election> elections = new ArrayList<>();
        try {
            for (int s = 0; s < specs.size(); s++) {
                elections.add(new Election(specs.get(s), s, candidates));
            }
            for (Election e : elections) {
                for (int i = 0; i < warmUp; i++) {
                    e.stepDown(0); // round 0: not kept
                }
                e.settle();
            }
            List<Failover.Run> runs = new ArrayList<>();
            for (int round = 1; round <= failovers; round++) {
                for (Election e : elections) {
                    runs.add(e.stepDown(round));
                    progress.accept(runs.size());
                }
                for (Election e : elections) {
                    runs.add(e.kill(round));
                    progress.accept(runs.size());
                }
            }
            return runs;
        } finally {
            elections.forEach(Election::close);
        }
    }

    /** How long a failover round waits for the next leader before it fails the run. */
    static final long LEAD_TIMEOUT_NANOS = 300_000_000_000L;

    /**
     * Between rounds: long enough for the candidate that stepped down, or the fresh one, to be queued in the store
     * (joining and re-queueing may return before the store has the candidate's entry).
     */
    static final long SETTLE_MILLIS = 500;

    /**
     * The longest random pause before a kill. A store that ends dead clients' sessions on a clock of its own
     * (ZooKeeper's tick, etcd's lease check every 500 ms) would otherwise see the rounds' kills at one phase of it: each
     * round follows the last one's expiry at the same rhythm, and the kill figures would measure that phase.
     */
    static final long KILL_PHASE_MILLIS = 1000;

    /** One line a failover worker printed: {@code LEAD}, {@code STEP} or {@code CLOCK}, with its stamp. */
    private record Line(int worker, String what, long nanos) {}

    /** One target's election: its candidate JVMs, the lines they printed, which of them leads. */
    private final class Election implements AutoCloseable {
        private final String spec;
        private final int storeIndex;
        private final String prefix = "bench-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        private final List<WorkerProcess> workers = new ArrayList<>();
        private final Map<Integer, WorkerProcess> byNumber = new HashMap<>();
        private final List<Line> lines = new ArrayList<>();
        private int started;
        private int leader = -1;

        Election(String spec, int storeIndex, int candidates) throws IOException, InterruptedException {
            this.spec = spec;
            this.storeIndex = storeIndex;
            for (int i = 0; i < candidates; i++) {
                start();
            }
            leader = await(l -> l.what().equals(BenchWorker.LEAD.trim()), "the first leader")
                    .worker();
            settle();
        }

        /** Starts a candidate JVM and waits until it has joined and its clock is checked. */
        private void start() throws IOException, InterruptedException {
            int number = started++;
            WorkerTask task = new WorkerTask(
                    WorkerTask.FAILOVER,
                    List.of(spec),
                    number,
                    1,
                    0,
                    1,
                    0,
                    0,
                    0,
                    1,
                    workload,
                    prefix,
                    workDir.resolve(name(number) + ".result.json").toString());
            WorkerProcess w = WorkerProcess.start(task, workDir, name(number), flightRecorder, l -> heard(number, l));
            workers.add(w);
            byNumber.put(number, w);
            w.awaitReady(READY_TIMEOUT_MILLIS);
            long before = System.nanoTime();
            w.send(BenchWorker.CLOCK);
            Line clock = await(l -> l.worker() == number && l.what().equals(BenchWorker.CLOCK), "its clock");
            long after = System.nanoTime();
            if (clock.nanos() < before || clock.nanos() > after) {
                throw w.failure("its System.nanoTime() read " + clock.nanos() + ", outside the engine's " + before
                        + " .. " + after + ": failover times need the one monotonic clock every JVM of a Linux host"
                        + " reads");
            }
        }

        private String name(int number) {
            return "failover-s" + storeIndex + "-w" + number;
        }

        private void heard(int worker, String line) {
            int space = line.indexOf(' ');
            if (space < 0) {
                return;
            }
            try {
                Line l = new Line(
                        worker,
                        line.substring(0, space),
                        Long.parseLong(line.substring(space + 1).trim()));
                synchronized (lines) {
                    lines.add(l);
                    lines.notifyAll();
                }
            } catch (NumberFormatException e) {
                // not a line of the failover protocol
            }
        }

        /** The first line {@code wanted} accepts, waiting for it up to {@link #LEAD_TIMEOUT_NANOS}. */
        private Line await(Predicate<Line> wanted, String what) throws InterruptedException {
            long deadline = System.nanoTime() + LEAD_TIMEOUT_NANOS;
            synchronized (lines) {
                while (true) {
                    for (Line l : lines) {
                        if (wanted.test(l)) {
                            return l;
                        }
                    }
                    for (WorkerProcess w : workers) {
                        if (w.ended()) {
                            throw w.failure(null);
                        }
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new BenchException("Waited " + LEAD_TIMEOUT_NANOS / 1_000_000_000 + " s for " + what
                                + " of the election on " + Redaction.uri(spec) + " in vain (logs: "
                                + workDir.resolve("failover-s" + storeIndex + "-w*.log") + ")");
                    }
                    lines.wait(Math.min(200, Math.max(1, left / 1_000_000)));
                }
            }
        }

        /**
         * The leader steps down; round 0 is a warm-up, measured but not kept by the caller, and followed by no pause:
         * another candidate is queued already, and warm-ups go as fast as the store hands over.
         */
        Failover.Run stepDown(int round) throws IOException, InterruptedException {
            int from = leader;
            long sent = System.nanoTime();
            byNumber.get(from).send(BenchWorker.STEP);
            Line step = await(
                    l -> l.worker() == from && l.what().equals(BenchWorker.STEP) && l.nanos() >= sent, "the step-down");
            Line next = await(
                    l -> l.what().equals(BenchWorker.LEAD.trim()) && l.nanos() >= step.nanos(), "the next leader");
            leader = next.worker();
            if (round > 0) {
                settle();
            }
            return new Failover.Run(
                    spec,
                    storeIndex,
                    Failover.STEP_DOWN,
                    round,
                    Stats.millis(next.nanos() - step.nanos()),
                    from,
                    next.worker());
        }

        /**
         * The leader's JVM is killed with SIGKILL, after a random pause of up to {@link #KILL_PHASE_MILLIS}, and a
         * fresh candidate takes its place.
         */
        Failover.Run kill(int round) throws IOException, InterruptedException {
            int from = leader;
            WorkerProcess killed = byNumber.get(from);
            Thread.sleep(ThreadLocalRandom.current().nextLong(KILL_PHASE_MILLIS));
            long kill = System.nanoTime();
            killed.kill();
            workers.remove(killed); // its end is not a failure
            Line next = await(
                    l -> l.what().equals(BenchWorker.LEAD.trim()) && l.worker() != from && l.nanos() >= kill,
                    "the next leader");
            leader = next.worker();
            killed.close();
            start();
            settle();
            return new Failover.Run(
                    spec, storeIndex, Failover.KILL, round, Stats.millis(next.nanos() - kill), from, next.worker());
        }

        void settle() throws InterruptedException {
            Thread.sleep(SETTLE_MILLIS);
        }

        /** Every candidate leaves (the leader hands over as it goes); a JVM still running after 10 s is killed. */
        @Override
        public void close() {
            for (WorkerProcess w : workers) {
                try {
                    w.send(BenchWorker.EXIT);
                } catch (IOException e) {
                    // already gone
                }
            }
            for (WorkerProcess w : workers) {
                try {
                    w.awaitFinished(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                w.close();
            }
        }
    }

    private List<WorkerResult> runWorkers(List<WorkerTask> tasks, String name, LongConsumer progress)
            throws IOException, InterruptedException {
        List<WorkerProcess> workers = new ArrayList<>();
        try {
            for (WorkerTask task : tasks) {
                workers.add(WorkerProcess.start(task, workDir, name + "-w" + task.index(), flightRecorder));
            }
            // with a contended warm-up, each worker is ready twice: for the warm-up, then for the measured part
            int starts = tasks.get(0).contendedWarmUp() > 0 ? 2 : 1;
            for (int s = 0; s < starts; s++) {
                for (WorkerProcess w : workers) {
                    w.awaitReady(READY_TIMEOUT_MILLIS);
                }
                long start = System.nanoTime() + START_DELAY_NANOS;
                for (WorkerProcess w : workers) {
                    w.go(start);
                }
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

    /**
     * The figures of one contended run from its workers' raw data ({@code results} in worker order, {@code threads}
     * threads each).
     */
    static RunData summarize(
            String spec, int storeIndex, int round, int keys, int threads, List<WorkerResult> results) {
        return summarize(spec, storeIndex, round, keys, threads, Workload.LOCK, results);
    }

    /**
     * The figures of one contended run of {@code workload} from its workers' raw data, its history checked against
     * the workload's rule ({@link HoldHistory}).
     */
    static RunData summarize(
            String spec,
            int storeIndex,
            int round,
            int keys,
            int threads,
            Workload workload,
            List<WorkerResult> results) {
        int p = results.size();
        int parties = p * threads;
        long start = Long.MAX_VALUE;
        long end = Long.MIN_VALUE;
        int[] count = new int[parties];
        for (int w = 0; w < p; w++) {
            WorkerResult r = results.get(w);
            start = Math.min(start, Arrays.stream(r.attemptNanos()).min().orElseThrow());
            end = Math.max(end, Arrays.stream(r.releaseNanos()).max().orElseThrow());
            for (int t : r.thread()) {
                count[w * threads + t]++;
            }
        }
        int total = results.stream().mapToInt(r -> r.grantNanos().length).sum();
        long[] waits = new long[total];
        long[][] grants = new long[parties][];
        double[][] grantMs = new double[parties][];
        double[][] waitMs = new double[parties][];
        for (int party = 0; party < parties; party++) {
            grants[party] = new long[count[party]];
            grantMs[party] = new double[count[party]];
            waitMs[party] = new double[count[party]];
        }
        int[] filled = new int[parties];
        List<long[]> events = new ArrayList<>(); // grant, release, process, key, thread
        List<HoldHistory.Hold> holds = new ArrayList<>();
        int reads = 0;
        int writes = 0;
        int at = 0;
        for (int w = 0; w < p; w++) {
            WorkerResult r = results.get(w);
            for (int i = 0; i < r.grantNanos().length; i++) {
                int party = w * threads + r.thread()[i];
                int k = filled[party]++;
                long wait = r.grantNanos()[i] - r.attemptNanos()[i];
                waits[at++] = wait;
                grants[party][k] = r.grantNanos()[i];
                grantMs[party][k] = Stats.millis(r.grantNanos()[i] - start);
                waitMs[party][k] = Stats.millis(wait);
                events.add(new long[] {r.grantNanos()[i], r.releaseNanos()[i], w, r.keyIndex()[i], r.thread()[i]});
                LockKind kind = r.kinds() == null ? LockKind.LOCK : r.kinds()[i];
                holds.add(new HoldHistory.Hold(
                        r.grantNanos()[i], r.releaseNanos()[i], w, r.thread()[i], r.keyIndex()[i], kind));
                if (kind == LockKind.READ) {
                    reads++;
                } else if (kind == LockKind.WRITE) {
                    writes++;
                }
            }
        }
        long[] sorted = Stats.sorted(waits);
        double seconds = (end - start) / 1e9;

        // hand-offs: consecutive grants of one key to different processes; apart, to another thread of one process
        events.sort(Comparator.comparingLong(e -> e[0]));
        Map<Long, long[]> previous = new HashMap<>();
        int handOffs = 0;
        int threadHandOffs = 0;
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
            } else if (prev != null && prev[4] != e[4]) {
                threadHandOffs++;
            }
        }
        // fairness: grants per party while every party was still taking the lock
        long firstDone = Long.MAX_VALUE;
        for (long[] g : grants) {
            firstDone = Math.min(firstDone, Arrays.stream(g).max().orElse(Long.MIN_VALUE));
        }
        double[] shares = new double[parties];
        for (int party = 0; party < parties; party++) {
            final long cut = firstDone;
            shares[party] = Arrays.stream(grants[party]).filter(t -> t <= cut).count();
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
        HoldHistory history = HoldHistory.check(holds, workload, start);
        RunSummary summary = new RunSummary(
                spec,
                storeIndex,
                round,
                p,
                threads,
                total,
                seconds,
                Stats.millis(Stats.mean(waits)),
                Stats.millis(Stats.quantile(sorted, 0.50)),
                Stats.millis(Stats.quantile(sorted, 0.99)),
                Stats.millis(sorted[sorted.length - 1]),
                total / seconds,
                handOffs / seconds,
                threadHandOffs / seconds,
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
                Arrays.stream(handOffsPerKey).boxed().toList(),
                threadShares(results, total),
                workload.name(),
                workload.readWrite() ? reads / seconds : null,
                workload.readWrite() ? writes / seconds : null,
                history.mostHeldAtOnce(),
                history.violations(),
                history.firstViolation());
        return new RunData(summary, List.of(grantMs), List.of(waitMs));
    }

    /** The workers' thread groups, each summed over the workers, per acquisition; the largest CPU first. */
    static List<RunSummary.ThreadShare> threadShares(List<WorkerResult> results, int acquisitions) {
        Map<String, long[]> groups = new HashMap<>(); // CPU nanoseconds, switches, allocated bytes
        for (WorkerResult r : results) {
            for (ThreadCpu t : r.threadCpu()) {
                long[] g = groups.computeIfAbsent(t.threads(), k -> new long[3]);
                g[0] += t.cpuNanos();
                g[1] += t.switches();
                g[2] += t.allocatedBytes();
            }
        }
        return groups.entrySet().stream()
                .map(e -> new RunSummary.ThreadShare(
                        e.getKey(),
                        Stats.millis((double) e.getValue()[0] / acquisitions),
                        (double) e.getValue()[1] / acquisitions,
                        (double) e.getValue()[2] / acquisitions))
                .sorted(Comparator.comparingDouble(RunSummary.ThreadShare::cpuMsPerAcquisition)
                        .reversed())
                .toList();
    }
}
