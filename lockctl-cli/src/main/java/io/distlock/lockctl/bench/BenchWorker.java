package io.distlock.lockctl.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.distlock.LockKind;
import io.distlock.lockctl.ProcessLogging;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;

/**
 * The worker JVM of {@code lockctl bench}. Talks to the engine by lines: it opens its target and warms up on a
 * private key, prints {@value #READY}, waits for {@code GO <nanoTime>}, starts at that instant of the host's monotonic
 * clock (so all workers start together; in the contended mode, all its threads), prints {@code P <done>} as it goes
 * and {@value #DONE} once its result file is written; {@code ERROR <message>} on failure. With a contended warm-up,
 * the first {@code GO} starts that warm-up on a key shared by all workers, and a second {@value #READY} and {@code GO}
 * start the measured part.
 *
 * <p>A failover worker ({@code --workload failover}) is a candidate of one election: it joins, prints {@value #READY},
 * and {@code LEAD <nanoTime>} each time it begins to lead, stamped as the target tells it; the engine sends
 * {@value #CLOCK} (answered {@code CLOCK <nanoTime>}, so that the engine can check that the worker reads its clock),
 * {@value #STEP} (answered {@code STEP <nanoTime>}, stamped just before the step-down) and {@value #EXIT}.
 */
public final class BenchWorker {

    static final String READY = "READY";
    static final String GO = "GO ";
    static final String PROGRESS = "P ";
    static final String DONE = "DONE";
    static final String ERROR = "ERROR ";
    static final String LEAD = "LEAD ";
    static final String CLOCK = "CLOCK";
    static final String STEP = "STEP";
    static final String EXIT = "EXIT";

    private final PrintStream out;
    private final WorkerTask task;
    /** The engine's lines (the task, then {@code GO}), read one at a time: one reader, as it may read ahead. */
    private final BufferedReader in;

    private BenchWorker(PrintStream out, WorkerTask task, BufferedReader in) {
        this.out = out;
        this.task = task;
        this.in = in;
    }

    /**
     * Runs the task the engine writes as JSON on the first line of stdin (not in a file or on the command line: its
     * URIs may carry a password).
     */
    public static void main(String[] args) {
        ProcessLogging.routeJavaUtilLogging();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        int status = 0;
        try {
            ObjectMapper json = new ObjectMapper();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line = in.readLine();
            if (line == null) {
                throw new IllegalStateException("Expected the task as JSON on stdin from the engine, got nothing");
            }
            WorkerTask task = json.readValue(line, WorkerTask.class);
            WorkerResult result = new BenchWorker(out, task, in).run();
            json.writeValue(Path.of(task.resultFile()).toFile(), result);
            out.println(DONE);
        } catch (Throwable e) {
            e.printStackTrace();
            out.println(ERROR + Errors.oneLine(e));
            status = 1;
        }
        out.flush();
        writeFlightRecordings();
        // client libraries may leave non-daemon threads behind
        Runtime.getRuntime().halt(status);
    }

    /** Stops the recordings started by {@code -XX:StartFlightRecording}, which writes them (halt() would not). */
    private static void writeFlightRecordings() {
        if (!FlightRecorder.isInitialized()) {
            return;
        }
        for (Recording recording : FlightRecorder.getFlightRecorder().getRecordings()) {
            try {
                recording.stop();
            } catch (RuntimeException e) {
                System.err.println("Could not write the flight recording: " + e);
            }
        }
    }

    private WorkerResult run() throws Exception {
        return switch (task.mode()) {
            case WorkerTask.CONTENDED -> contended();
            case WorkerTask.UNCONTENDED -> uncontended();
            case WorkerTask.HELD -> held();
            case WorkerTask.FAILOVER -> failover();
            default -> throw new IllegalArgumentException("Unknown worker mode " + task.mode());
        };
    }

    private WorkerResult contended() throws Exception {
        int threads = task.threads();
        Stamps stamps = new Stamps(task.acquisitions() * threads);
        try (BenchTarget target = Targets.open(task.specs().get(0))) {
            warmUp(target, task.keyPrefix() + "warm-up-" + task.index());
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                if (task.contendedWarmUp() > 0) {
                    contendedWarmUp(target, pool);
                }
                long requestsBefore = target.storeRequests().orElse(-1);
                // the threads wait at the latch, so that they start at the GO instant and not when they were created
                CountDownLatch go = new CountDownLatch(1);
                CompletionService<Void> finished = new ExecutorCompletionService<>(pool);
                AtomicInteger done = new AtomicInteger();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    finished.submit(() -> {
                        go.await();
                        takeTheKeys(target, thread, stamps, done);
                        return null;
                    });
                }
                // read before the start, not after it: the dump and the reads would delay this worker's start
                Map<String, ThreadCpu> threadsBefore = ThreadCpu.snapshot();
                awaitGo();
                long cpuBefore = cpuNanos();
                go.countDown();
                for (int t = 0; t < threads; t++) {
                    finished.take().get(); // the first thread to fail fails the worker
                }
                long cpu = cpuNanos() - cpuBefore;
                List<ThreadCpu> threadCpu = ThreadCpu.since(threadsBefore);
                long requests = requestsBefore < 0 ? -1 : target.storeRequests().orElse(-1) - requestsBefore;
                return new WorkerResult(
                        task.index(),
                        stamps.attempt,
                        stamps.grant,
                        stamps.release,
                        stamps.keyIndex,
                        stamps.thread,
                        stamps.kind,
                        null,
                        new long[] {requests},
                        cpu,
                        peakRss(),
                        0,
                        threadCpu);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * Thread {@code t}'s part of a contended run: its acquisitions are {@code t * N .. (t + 1) * N - 1} of the stamps.
     * Party {@code w * T + t} (worker w's thread t) takes key {@code (i + w * T + t) mod K} at its i-th acquisition:
     * every party takes every key in turn, the parties staggered.
     */
    private void takeTheKeys(BenchTarget target, int t, Stamps stamps, AtomicInteger done) throws Exception {
        int n = task.acquisitions();
        int total = n * task.threads();
        int step = Math.max(1, total / 100);
        int party = task.index() * task.threads() + t;
        Workload.Chooser chooser = task.workload().chooser(party);
        for (int i = 0; i < n; i++) {
            int at = t * n + i;
            stamps.thread[at] = t;
            stamps.keyIndex[at] = (i + party) % task.keys();
            stamps.kind[at] = chooser.next();
            String key = task.keyPrefix() + stamps.keyIndex[at];
            stamps.attempt[at] = System.nanoTime();
            BenchTarget.Held held =
                    target.acquire(key, stamps.kind[at], task.workload().permits());
            stamps.grant[at] = System.nanoTime();
            hold();
            stamps.release[at] = System.nanoTime();
            held.release();
            int sum = done.incrementAndGet();
            if (sum % step == 0 || sum == total) {
                out.println(PROGRESS + sum);
            }
        }
    }

    /** Per acquisition of a contended run, as in {@link WorkerResult}; each thread writes its own range. */
    private static final class Stamps {
        final long[] attempt;
        final long[] grant;
        final long[] release;
        final int[] keyIndex;
        final int[] thread;
        final LockKind[] kind;

        Stamps(int acquisitions) {
            kind = new LockKind[acquisitions];
            attempt = new long[acquisitions];
            grant = new long[acquisitions];
            release = new long[acquisitions];
            keyIndex = new int[acquisitions];
            thread = new int[acquisitions];
        }
    }

    private WorkerResult uncontended() throws Exception {
        List<BenchTarget> targets = new ArrayList<>();
        try {
            for (String spec : task.specs()) {
                targets.add(Targets.open(spec));
            }
            int t = targets.size();
            for (int s = 0; s < t; s++) {
                warmUp(targets.get(s), task.keyPrefix() + "warm-up-" + s);
            }
            long[] before = new long[t];
            for (int s = 0; s < t; s++) {
                before[s] = targets.get(s).storeRequests().orElse(-1);
            }
            awaitGo();
            long cpuBefore = cpuNanos();
            int n = task.acquisitions();
            long[][][] latency = new long[task.rounds()][t][n];
            int step = Math.max(1, n / 20);
            int done = 0;
            for (int round = 0; round < task.rounds(); round++) {
                for (int i = 0; i < n; i++) {
                    // pair by pair, rotating which target goes first, so drift hits every target alike
                    for (int k = 0; k < t; k++) {
                        int s = (i + round + k) % t;
                        String key = task.keyPrefix() + s + "-" + (i % task.keys());
                        long start = System.nanoTime();
                        BenchTarget.Held held = targets.get(s).acquire(key);
                        hold();
                        held.release();
                        latency[round][s][i] = System.nanoTime() - start;
                    }
                    done++;
                    if (done % step == 0) {
                        out.println(PROGRESS + done);
                    }
                }
            }
            long[] requests = new long[t];
            for (int s = 0; s < t; s++) {
                requests[s] =
                        before[s] < 0 ? -1 : targets.get(s).storeRequests().orElse(-1) - before[s];
            }
            return WorkerResult.unstamped(task.index(), latency, requests, cpuNanos() - cpuBefore, peakRss(), 0);
        } finally {
            for (BenchTarget target : targets) {
                target.close();
            }
        }
    }

    /** A candidate of the run's election until the engine says {@value #EXIT} (or kills this JVM). */
    private WorkerResult failover() throws Exception {
        try (BenchTarget target = Targets.open(task.specs().get(0))) {
            // the stamp is taken as the target says "you lead", before the line is printed
            BenchTarget.Candidate candidate = target.join(
                    task.keyPrefix() + "failover", "w" + task.index(), () -> out.println(LEAD + System.nanoTime()));
            out.println(READY);
            for (String line = in.readLine(); line != null && !line.equals(EXIT); line = in.readLine()) {
                switch (line) {
                    case CLOCK -> out.println(CLOCK + " " + System.nanoTime());
                    case STEP -> {
                        long start = System.nanoTime();
                        candidate.stepDown();
                        out.println(STEP + " " + start);
                    }
                    default -> throw new IllegalStateException("Unexpected line from the engine: " + line);
                }
            }
        }
        return WorkerResult.unstamped(task.index(), null, new long[] {-1}, cpuNanos(), peakRss(), 0);
    }

    private WorkerResult held() throws Exception {
        int n = task.acquisitions();
        try (BenchTarget target = Targets.open(task.specs().get(0))) {
            warmUp(target, task.keyPrefix() + "warm-up");
            awaitGo();
            long heapBefore = usedHeapAfterGc();
            List<BenchTarget.Held> held = new ArrayList<>(n);
            int step = Math.max(1, n / 100);
            LockKind kind = heldKind();
            for (int i = 0; i < n; i++) {
                held.add(target.acquire(
                        task.keyPrefix() + "held-" + i, kind, task.workload().permits()));
                if ((i + 1) % step == 0) {
                    out.println(PROGRESS + (i + 1));
                }
            }
            long heapAfter = usedHeapAfterGc();
            for (BenchTarget.Held h : held) {
                h.release();
            }
            double perLock = (heapAfter - heapBefore) / (double) n;
            return WorkerResult.unstamped(task.index(), null, new long[] {-1}, cpuNanos(), peakRss(), perLock);
        }
    }

    /** What the held mode keeps on each of its keys: a lock, a read (read-heavy) or a permit (semaphore). */
    private LockKind heldKind() {
        return task.workload().readWrite()
                ? LockKind.READ
                : task.workload().chooser(0).next();
    }

    /** Takes the key {@link WorkerTask#warmUp()} times alone, with the workload's mix (its own party's). */
    private void warmUp(BenchTarget target, String key) throws Exception {
        Workload.Chooser chooser = task.workload().chooser(task.index());
        for (int i = 0; i < task.warmUp(); i++) {
            target.acquire(key, chooser.next(), task.workload().permits()).release();
        }
    }

    /**
     * Every thread of every worker takes one shared key {@link WorkerTask#contendedWarmUp()} times, all started
     * together, holding it as the measured part will: the wait and the hand-off are compiled before the start, not
     * while they are measured.
     */
    private void contendedWarmUp(BenchTarget target, ExecutorService pool) throws Exception {
        String key = task.keyPrefix() + "warm-up-shared";
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Void>> threads = new ArrayList<>();
        for (int t = 0; t < task.threads(); t++) {
            Workload.Chooser chooser = task.workload().chooser(task.index() * task.threads() + t);
            threads.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < task.contendedWarmUp(); i++) {
                    BenchTarget.Held held =
                            target.acquire(key, chooser.next(), task.workload().permits());
                    hold();
                    held.release();
                }
                return null;
            }));
        }
        awaitGo();
        go.countDown();
        for (Future<Void> f : threads) {
            f.get();
        }
    }

    private void awaitGo() throws IOException {
        out.println(READY);
        String line = in.readLine();
        if (line == null || !line.startsWith(GO)) {
            throw new IllegalStateException("Expected '" + GO + "<nanoTime>' from the engine, got " + line);
        }
        long start = Long.parseLong(line.substring(GO.length()).trim());
        for (long left = start - System.nanoTime(); left > 0; left = start - System.nanoTime()) {
            LockSupport.parkNanos(Math.min(left, 1_000_000));
        }
    }

    private void hold() {
        if (task.holdNanos() <= 0) {
            return;
        }
        long until = System.nanoTime() + task.holdNanos();
        for (long left = task.holdNanos(); left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static long usedHeapAfterGc() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(
                    used,
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static long cpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    private static long peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: unknown
        }
        return -1;
    }
}
