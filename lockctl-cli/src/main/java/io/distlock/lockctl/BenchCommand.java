package io.distlock.lockctl;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.distlock.lockctl.bench.BenchReport;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.Comparison;
import io.distlock.lockctl.bench.Engine;
import io.distlock.lockctl.bench.Failover;
import io.distlock.lockctl.bench.Progress;
import io.distlock.lockctl.bench.Reports;
import io.distlock.lockctl.bench.RunData;
import io.distlock.lockctl.bench.Targets;
import io.distlock.lockctl.bench.UncontendedSummary;
import io.distlock.lockctl.bench.Workload;
import io.distlock.spi.Redaction;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Seed 000's experiment (section 6, Tables 1-2, Figures 1-2) for any lock URI or peer: P worker JVMs take one key N
 * times each; waits, rates, fairness, store requests, CPU and memory; several stores alternated round by round and
 * compared by paired ratios.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Seed 000's experiment for any store: P worker JVMs (of T threads) take one key N times each, together.",
            "Reports waits (mean, p50, p99, max), acquisitions and hand-offs per second, Jain's fairness index,",
            "store requests per acquisition, CPU and peak RSS per worker. Several --store are alternated round by",
            "round (A B A B ...) and compared by the median of paired ratios against the first.",
            "Writes bench.json, PNG charts, summary.txt and index.html to --out. With no --store, $DISTLOCK_STORE is",
            "the one store if set; else on an embedded ZooKeeper, distlock's fair queue beside an unfair retry loop",
            "(unfair:<uri>, the seed's old algorithm's shape: tryLock, then a random sleep of 0 to",
            "min(50 x attempt, 1000) ms), 5 processes."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl bench",
            "  lockctl bench --store zk://127.0.0.1:2181/locks --processes 1,3,5 --acquisitions 5000",
            "  lockctl bench --store etcd://127.0.0.1:2379/locks --store peer:jetcd-lock://127.0.0.1:2379 --rounds 5",
            "  lockctl bench --store zk://h:2181/a --store zk://h:2181/b --mode uncontended --rounds 10",
            "  lockctl bench --store zk://process/a --store zk://process/b --warm-up 0   # a server of its own",
            "  lockctl bench --store redis://127.0.0.1:6379 --processes 1,3 --threads 4",
            "  lockctl bench --store redis://127.0.0.1:6379 --held 10000",
            "  lockctl bench --store zk://127.0.0.1:2181/locks --workload read-heavy --read-share 0.9",
            "  lockctl bench --store redis://127.0.0.1:6379 --workload semaphore --permits 4 --processes 8",
            "  lockctl bench --store 'zk://127.0.0.1:2181/locks?ttl=10s' --workload failover --failovers 30",
            "Peers (third-party locks, raw-store floors) come with the benchmarks module: scripts/bench-peers."
        })
final class BenchCommand implements Callable<Integer> {

    private static final int DEFAULT_WARM_UP = 2000;
    private static final List<Integer> DEFAULT_PROCESSES = List.of(1, 3, 5);
    /** Without --store: the fair queue and the unfair loop at the seed's largest process count only. */
    private static final List<Integer> DEFAULT_RUN_PROCESSES = List.of(5);
    /** The read-heavy workload's processes and share of reads when not given. */
    private static final List<Integer> DEFAULT_READ_HEAVY_PROCESSES = List.of(5);

    private static final double DEFAULT_READ_SHARE = 0.9;
    /** The semaphore workload's processes and permits when not given: more processes than permits. */
    private static final List<Integer> DEFAULT_SEMAPHORE_PROCESSES = List.of(8);

    private static final int DEFAULT_PERMITS = 4;
    /** The failover workload's candidates (worker JVMs), rounds of each kind and unrecorded step-downs. */
    private static final List<Integer> DEFAULT_FAILOVER_PROCESSES = List.of(3);

    private static final int DEFAULT_FAILOVERS = 30;
    private static final int DEFAULT_FAILOVER_WARM_UP = 3;

    private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    @Spec
    CommandSpec spec;

    @Option(
            names = "--store",
            paramLabel = "URI",
            description = "A lock URI, unfair:<URI> (the unfair retry loop on it), handoff:<URI or peer spec>"
                    + " (--workload failover through its lock: each candidate waits for the lock, leads while it holds"
                    + " it, steps down by releasing it) or a peer spec (peer:...); repeat to compare. Default:"
                    + " $DISTLOCK_STORE alone if set, else an embedded ZooKeeper's URI and unfair:<its URI>. The host"
                    + " 'embedded' names that server, the host 'process' a ZooKeeper server lockctl starts in a JVM of"
                    + " its own (zk://process/bench); every spec naming one names the same server.")
    List<String> stores = new ArrayList<>();

    @Option(
            names = "--processes",
            split = ",",
            paramLabel = "P",
            description = "Worker JVMs per run, comma-separated (default: 1,3,5; without --store: 5; --workload"
                    + " read-heavy: 5; --workload semaphore: 8).")
    List<Integer> processes = new ArrayList<>();

    @Option(
            names = "--acquisitions",
            paramLabel = "N",
            defaultValue = "300",
            description = "Acquisitions per process (per thread with --threads; uncontended: per store and round)"
                    + " (default: ${DEFAULT-VALUE}).")
    int acquisitions;

    @Option(
            names = "--threads",
            paramLabel = "T",
            defaultValue = "1",
            description = "Threads per worker JVM, all on its one locker, each doing --acquisitions (contended mode"
                    + " only) (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(
            names = "--rounds",
            paramLabel = "K",
            defaultValue = "1",
            description = "Rounds; the stores alternate within each round (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(
            names = "--mode",
            defaultValue = "contended",
            description = "contended (P JVMs on one key) or uncontended (one JVM, stores interleaved pair by pair,"
                    + " acquire+release latency) (default: ${DEFAULT-VALUE}).")
    Mode mode;

    @Option(
            names = "--workload",
            paramLabel = "W",
            defaultValue = "lock",
            description = "What each acquisition takes: lock (the lock on the key), read-heavy (the read-write lock on"
                    + " the key: the read side with probability --read-share, else the write side) or semaphore (one"
                    + " permit of the semaphore of --permits permits on the key); or failover (--processes candidates"
                    + " of one election, default 3; --failovers rounds of each kind: the leader steps down, the"
                    + " leader's JVM is killed with SIGKILL; the time to the next leader's first 'you lead')"
                    + " (default: ${DEFAULT-VALUE}).")
    String workload;

    @Option(
            names = "--read-share",
            paramLabel = "S",
            description = "--workload read-heavy: the share of reads, between 0 and 1 (default: 0.9, 90 %% reads).")
    Double readShare;

    @Option(
            names = "--permits",
            paramLabel = "P",
            description = "--workload semaphore: the semaphore's permits, at least 1 (default: 4).")
    Integer permits;

    @Option(
            names = "--hold",
            defaultValue = "0ms",
            converter = DurationConverter.class,
            description = "How long each lock is held (default: ${DEFAULT-VALUE}).")
    Duration hold;

    @Option(
            names = "--keys",
            paramLabel = "K",
            defaultValue = "1",
            description = "Spread the acquisitions over K keys (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(
            names = "--warm-up",
            paramLabel = "N",
            description = "Acquisitions of a private key per worker before the start, so that the JIT compiler has"
                    + " compiled the lock's code before it is measured (default: " + DEFAULT_WARM_UP + "); --workload"
                    + " failover: unrecorded step-downs per store before the measured rounds (default: "
                    + DEFAULT_FAILOVER_WARM_UP + ").")
    Integer warmUp;

    @Option(
            names = "--failovers",
            paramLabel = "N",
            description = "--workload failover: measured rounds of each kind (a step-down, a SIGKILL of the leader's"
                    + " JVM) per store, at least 1 (default: " + DEFAULT_FAILOVERS + ").")
    Integer failovers;

    @Option(
            names = "--contended-warm-up",
            paramLabel = "N",
            defaultValue = "0",
            description =
                    "Contended mode: after the private warm-up, every thread of every worker takes one shared key N"
                            + " times, all at once, so that the wait and the hand-off are compiled before the start, not while"
                            + " they are measured (default: ${DEFAULT-VALUE}, none).")
    int contendedWarmUp;

    @Option(
            names = "--held",
            paramLabel = "N",
            defaultValue = "0",
            description = "Also measure the client heap per held lock with N locks held by one locker (0: skip).")
    int held;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            description = "Where the report goes (default: ./lockctl-bench-<timestamp>).")
    Path out;

    @Option(
            names = "--jfr",
            description = "Record every worker JVM with JDK Flight Recorder (profile settings) to"
                    + " <out>/work/<worker>.jfr; read them with 'jfr print' or 'jfr summary'.")
    boolean flightRecorder;

    @Option(
            names = "--cpu",
            description = "Also print where the CPU went, per group of the workers' threads (always in summary.txt).")
    boolean cpuTables;

    @Option(names = "--no-charts", description = "Write the JSON and the text summary only.")
    boolean noCharts;

    @Option(
            names = "--replot",
            paramLabel = "DIR",
            description = "Measure nothing: redraw the charts and index.html of DIR/bench.json, print its summary.")
    Path replot;

    /** The two kinds of run. */
    enum Mode {
        contended,
        uncontended
    }

    @Override
    public Integer call() throws Exception {
        if (replot != null) {
            BenchReport report =
                    new ObjectMapper().readValue(replot.resolve("bench.json").toFile(), BenchReport.class);
            Files.writeString(replot.resolve("summary.txt"), Reports.text(report, true));
            Reports.write(report, replot);
            spec.commandLine().getOut().print(Reports.text(report, cpuTables));
            spec.commandLine()
                    .getOut()
                    .println("Report: " + replot.resolve("index.html").toAbsolutePath());
            return ExitCodes.OK;
        }
        // DISTLOCK_STORE stands for one --store: measured as given, the comparison with the unfair loop only on the
        // embedded default
        stores = new ArrayList<>(DefaultStore.chosen(stores, LockCtl.env(spec)));
        Workload chosen = workload();
        if (processes.isEmpty()) {
            processes.addAll(
                    switch (chosen.name()) {
                        case Workload.READ_HEAVY_NAME -> DEFAULT_READ_HEAVY_PROCESSES;
                        case Workload.SEMAPHORE_NAME -> DEFAULT_SEMAPHORE_PROCESSES;
                        case Workload.FAILOVER_NAME -> DEFAULT_FAILOVER_PROCESSES;
                        default -> stores.isEmpty() ? DEFAULT_RUN_PROCESSES : DEFAULT_PROCESSES;
                    });
        }
        boolean failover = chosen.name().equals(Workload.FAILOVER_NAME);
        if (warmUp == null) {
            warmUp = failover ? DEFAULT_FAILOVER_WARM_UP : DEFAULT_WARM_UP;
        }
        validate();
        if (failover) {
            validateFailover();
        }
        PrintWriter console = spec.commandLine().getOut();
        Path dir = out != null
                ? out
                : Path.of("lockctl-bench-" + LocalDateTime.now().format(STAMP));
        Files.createDirectories(dir);
        Path work = dir.resolve("work");
        try (DefaultStore defaults = DefaultStore.unless(stores, "bench")) {
            List<String> targets = defaults.uris(stores);
            if (stores.isEmpty() && !failover) {
                targets = List.of(targets.get(0), Targets.unfair(targets.get(0)));
            }
            for (String target : targets) {
                // fail fast, in this process, with the library's own error for a bad URI or an unreachable store
                try (BenchTarget t = Targets.open(target)) {
                    t.storeRequests();
                }
            }
            Engine engine = new Engine(
                    work, acquisitions, keys, hold.toNanos(), warmUp, contendedWarmUp, flightRecorder, chosen);
            String environment = environment();
            console.println("lockctl bench: "
                    + targets.stream().map(Redaction::uri).collect(Collectors.joining(" vs ")) + " (" + environment
                    + ")");
            console.println(measured(chosen));
            console.flush();
            List<RunData> runs = new ArrayList<>();
            List<Comparison> comparisons = List.of();
            List<UncontendedSummary> uncontended = List.of();
            List<BenchReport.HeldSummary> heldSummaries = new ArrayList<>();
            long total = mode == Mode.uncontended
                    ? (long) acquisitions * rounds
                    : (long) rounds
                            * targets.size()
                            * acquisitions
                            * threads
                            * processes.stream().mapToInt(Integer::intValue).sum();
            List<Failover.Run> failoverRuns = List.of();
            if (failover) {
                total = (long) targets.size() * 2 * failovers;
            }
            try (Progress progress = Progress.of("bench", total + (long) held * targets.size())) {
                if (failover) {
                    failoverRuns = engine.failover(targets, failovers, processes.get(0), progress.step());
                } else if (mode == Mode.uncontended) {
                    uncontended = engine.uncontended(targets, rounds, progress.step());
                } else {
                    for (int round = 1; round <= rounds; round++) {
                        for (int p : processes) {
                            for (int s = 0; s < targets.size(); s++) {
                                runs.add(engine.contended(targets.get(s), s, round, p, threads, progress.step()));
                            }
                        }
                    }
                    comparisons =
                            Comparison.of(runs.stream().map(RunData::summary).toList(), targets, processes);
                }
                if (held > 0) {
                    for (int s = 0; s < targets.size(); s++) {
                        heldSummaries.add(new BenchReport.HeldSummary(
                                targets.get(s),
                                held,
                                engine.heapPerHeldLock(targets.get(s), s, held, progress.step())));
                    }
                }
            }
            BenchReport report = new BenchReport(
                    commandLine(chosen),
                    environment,
                    targets,
                    comparisons,
                    uncontended,
                    heldSummaries,
                    runs,
                    chosen,
                    Failover.summarize(targets, failoverRuns),
                    failoverRuns);
            new ObjectMapper()
                    .registerModule(Reports.hidingSecrets())
                    .enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(dir.resolve("bench.json").toFile(), report);
            Files.writeString(dir.resolve("summary.txt"), Reports.text(report, true));
            if (!noCharts) {
                Reports.write(report, dir);
            }
            console.print(Reports.text(report, cpuTables));
            console.println("Report: "
                    + dir.resolve(noCharts ? "bench.json" : "index.html").toAbsolutePath());
            return ExitCodes.OK;
        }
    }

    /** What the run measures, in a line or two before it starts. */
    private String measured(Workload chosen) {
        String what = String.format(
                Locale.ROOT,
                "Measuring: %s worker JVMs%s, each taking one key %d times%s, all at once; waits, rate, fairness.",
                processes.stream().map(String::valueOf).collect(Collectors.joining(", ")),
                threads == 1 ? "" : " of " + threads + " threads",
                acquisitions,
                threads == 1 ? "" : " per thread");
        if (!chosen.name().equals(Workload.LOCK_NAME)) {
            what += "\nWorkload: " + chosen.describe()
                    + (chosen.readWrite() ? "; the rate of each side too" : "")
                    + "; every run's history checked: no write beside another hold, no more holders than allowed.";
        }
        if (chosen.name().equals(Workload.FAILOVER_NAME)) {
            what = String.format(
                    Locale.ROOT,
                    "Measuring failover: %d candidate JVMs per store in one election; %d unrecorded step-downs, then"
                            + " %d rounds of each kind, stores alternated: the leader steps down (from its call) or its"
                            + " JVM is killed with SIGKILL (from the kill), to the next leader's first 'you lead'.",
                    processes.get(0),
                    warmUp,
                    failovers);
        }
        if (mode == Mode.uncontended) {
            what = String.format(
                    Locale.ROOT,
                    "Measuring: one JVM, acquire + release of a free key, %d times per store and round.",
                    acquisitions);
        }
        if (stores.isEmpty() && !chosen.name().equals(Workload.FAILOVER_NAME)) {
            what += "\nThe embedded ZooKeeper's fair queue (each waiter in line, woken by its predecessor's release)"
                    + " beside an unfair retry loop on it (tryLock, then a random sleep of 0 to min(50 x attempt, 1000)"
                    + " ms: seed 000's old algorithm's shape). Fair: even waits, Jain near 1; unfair: the holder takes it again while the others sleep, in bursts.";
        }
        return what;
    }

    /** The workload the options name; refuses an unknown one and an option of another workload. */
    private Workload workload() {
        Workload chosen;
        switch (workload) {
            case Workload.LOCK_NAME -> chosen = Workload.LOCK;
            case Workload.READ_HEAVY_NAME -> {
                double share = readShare == null ? DEFAULT_READ_SHARE : readShare;
                if (!(share >= 0 && share <= 1)) {
                    throw new ParameterException(
                            spec.commandLine(),
                            "--read-share must be between 0 and 1 (0.9: 90 % reads), got " + readShare);
                }
                chosen = Workload.readHeavy(share);
            }
            case Workload.FAILOVER_NAME -> chosen = Workload.FAILOVER;
            case Workload.SEMAPHORE_NAME -> {
                int p = permits == null ? DEFAULT_PERMITS : permits;
                if (p < 1) {
                    throw new ParameterException(
                            spec.commandLine(), "--permits must be at least 1 (the semaphore's permits), got " + p);
                }
                chosen = Workload.semaphore(p);
            }
            default ->
                throw new ParameterException(
                        spec.commandLine(),
                        "Unknown --workload '" + workload + "'; expected lock, read-heavy, semaphore or failover");
        }
        if (readShare != null && !chosen.readWrite()) {
            throw new ParameterException(
                    spec.commandLine(), "--read-share applies to --workload read-heavy only, not " + chosen.name());
        }
        if (permits != null && !chosen.name().equals(Workload.SEMAPHORE_NAME)) {
            throw new ParameterException(
                    spec.commandLine(), "--permits applies to --workload semaphore only, not " + chosen.name());
        }
        if (failovers != null && !chosen.name().equals(Workload.FAILOVER_NAME)) {
            throw new ParameterException(
                    spec.commandLine(), "--failovers applies to --workload failover only, not " + chosen.name());
        }
        if (failovers == null) {
            failovers = DEFAULT_FAILOVERS;
        }
        if (!chosen.name().equals(Workload.LOCK_NAME) && mode == Mode.uncontended) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--workload " + chosen.name() + " applies to the contended mode and --held only: run --mode"
                            + " uncontended with the lock workload");
        }
        return chosen;
    }

    private void validate() {
        if (acquisitions < 1 || rounds < 1 || keys < 1 || warmUp < 0 || held < 0) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--acquisitions, --rounds and --keys must be at least 1, --warm-up and --held not negative");
        }
        if (contendedWarmUp < 0) {
            throw new ParameterException(spec.commandLine(), "--contended-warm-up must not be negative");
        }
        if (contendedWarmUp > 0 && (mode == Mode.uncontended || held > 0)) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--contended-warm-up applies to the contended mode only: run --mode uncontended or --held without"
                            + " it");
        }
        if (processes.isEmpty() || processes.stream().anyMatch(p -> p < 1 || p > 64)) {
            throw new ParameterException(spec.commandLine(), "--processes must be between 1 and 64, e.g. 1,3,5");
        }
        if (hold.isNegative()) {
            throw new ParameterException(spec.commandLine(), "--hold must not be negative");
        }
        if (threads < 1 || threads > 64) {
            throw new ParameterException(
                    spec.commandLine(), "--threads must be between 1 and 64 (threads per worker JVM), got " + threads);
        }
        if (threads > 1 && (mode == Mode.uncontended || held > 0)) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--threads applies to the contended mode only: run --mode uncontended or --held without it");
        }
        if (threads > 1) {
            for (String store : stores) {
                if (!Targets.sharedByThreads(store)) {
                    throw new ParameterException(
                            spec.commandLine(),
                            "--threads " + threads + " cannot measure " + store + ": its lock belongs to the client's"
                                    + " process, not to a thread, so the threads of one worker would hold it at once;"
                                    + " measure it with --threads 1");
                }
            }
        }
    }

    /** What the failover workload refuses: options of the lock workloads, and too few candidates or rounds. */
    private void validateFailover() {
        if (failovers < 1) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--failovers must be at least 1 (measured rounds of each kind per store), got " + failovers);
        }
        if (processes.size() != 1 || processes.get(0) < 2) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--workload failover takes one --processes, the election's candidates, at least 2 (default 3), got "
                            + processes);
        }
        if (threads != 1 || held > 0 || contendedWarmUp > 0 || rounds != 1 || keys != 1 || !hold.isZero()) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--workload failover measures hand-overs, not acquisitions: --threads, --held,"
                            + " --contended-warm-up, --rounds, --keys and --hold do not apply (--failovers sets the"
                            + " rounds)");
        }
    }

    private String commandLine(Workload chosen) {
        boolean peers = stores.stream().anyMatch(s -> s.startsWith("peer:"));
        List<String> args = new ArrayList<>(peers ? List.of("scripts/bench-peers") : List.of("./lockctl", "bench"));
        stores.forEach(s -> args.addAll(List.of("--store", s)));
        if (mode == Mode.contended) {
            args.addAll(List.of(
                    "--processes",
                    String.join(",", processes.stream().map(String::valueOf).toList())));
        }
        if (threads != 1) {
            args.addAll(List.of("--threads", Integer.toString(threads)));
        }
        if (!chosen.name().equals(Workload.FAILOVER_NAME)) {
            args.addAll(
                    List.of("--acquisitions", Integer.toString(acquisitions), "--rounds", Integer.toString(rounds)));
        }
        if (mode == Mode.uncontended) {
            args.addAll(List.of("--mode", "uncontended"));
        }
        if (!chosen.name().equals(Workload.LOCK_NAME)) {
            args.addAll(List.of("--workload", chosen.name()));
        }
        if (chosen.readWrite()) {
            args.addAll(List.of("--read-share", Double.toString(chosen.readShare())));
        }
        if (chosen.name().equals(Workload.SEMAPHORE_NAME)) {
            args.addAll(List.of("--permits", Integer.toString(chosen.permits())));
        }
        if (!hold.isZero()) {
            args.addAll(List.of("--hold", hold.toMillis() + "ms"));
        }
        if (chosen.name().equals(Workload.FAILOVER_NAME)) {
            args.addAll(List.of("--failovers", Integer.toString(failovers)));
        }
        if (warmUp != (chosen.name().equals(Workload.FAILOVER_NAME) ? DEFAULT_FAILOVER_WARM_UP : DEFAULT_WARM_UP)) {
            args.addAll(List.of("--warm-up", Integer.toString(warmUp)));
        }
        if (contendedWarmUp > 0) {
            args.addAll(List.of("--contended-warm-up", Integer.toString(contendedWarmUp)));
        }
        if (keys != 1) {
            args.addAll(List.of("--keys", Integer.toString(keys)));
        }
        if (held > 0) {
            args.addAll(List.of("--held", Integer.toString(held)));
        }
        if (flightRecorder) {
            args.add("--jfr");
        }
        return String.join(" ", args.stream().map(BenchCommand::shellWord).toList());
    }

    /**
     * {@code word} as a POSIX shell reads it back: as it is when it holds only characters no shell treats specially,
     * else in single quotes (a URI's {@code &} or {@code ?} would otherwise end the command or glob).
     */
    static String shellWord(String word) {
        if (!word.isEmpty() && SHELL_SAFE.matcher(word).matches()) {
            return word;
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    private static String environment() {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return String.format(
                Locale.ROOT,
                "Java %s, %d cores, load average %.2f",
                System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(),
                load);
    }
}
