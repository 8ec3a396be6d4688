package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * distlock's ZooKeeper backend against Curator's {@code InterProcessMutex} on the same in-process server. Not a test:
 * it runs only with {@code -Ddistlock.bench=true} and asserts nothing about speed; it writes its figures to {@code
 * target/benchmark-zookeeper.md} and the log.
 *
 * <ol>
 *   <li>Uncontended: acquire + release of a free lock, distlock's whole locker against the raw mutex, in alternating
 *       rounds so that drift of the machine hits both alike; mean, p50, p99 and the ratio.
 *   <li>Contended: {@value #PROCESSES} worker JVMs x {@value #PER_PROCESS} acquisitions of one key, empty critical
 *       section; acquisitions per second, mean and max wait, Jain's fairness index over the processes' throughputs.
 * </ol>
 *
 * <pre>./mvnw -B -pl backend-zookeeper -am verify -Ddistlock.bench=true -Dtest=ZooKeeperBenchmark \
 *     -Dsurefire.failIfNoSpecifiedTests=false</pre>
 */
@EnabledIfSystemProperty(named = "distlock.bench", matches = "true")
class ZooKeeperBenchmark {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperBenchmark.class);

    static final int PROCESSES = 5;
    static final int PER_PROCESS = 500;
    private static final int ROUNDS = 20;
    private static final int PER_ROUND = 250;
    private static final int WARM_UP = 2_000;
    private static final int CONTENDED_ROUNDS = 5;

    private final StringBuilder report = new StringBuilder();

    @Test
    void run() throws Exception {
        // Empty container nodes would be reaped between operations and re-created, adding noise to both sides.
        System.setProperty("znode.container.checkIntervalMs", "600000");
        try (TestingServer server = ZkTestServers.server()) {
            line("# distlock-zookeeper vs Curator InterProcessMutex");
            line("");
            line("Java " + System.getProperty("java.version") + ", "
                    + Runtime.getRuntime().availableProcessors()
                    + " cores, ZooKeeper in-process TestingServer (forceSync=no)");
            line("");
            uncontended(server.getConnectString());
            contended(server.getConnectString());
        }
        Path out = Path.of("target", "benchmark-zookeeper.md");
        Files.writeString(out, report.toString(), StandardCharsets.UTF_8);
        log.warn("Benchmark results (also in {}):\n{}", out.toAbsolutePath(), report);
    }

    private void uncontended(String connect) throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("zk://" + connect + "/bench-distlock?sessionTimeout=30s");
                LockBackend backend = new ZooKeeperLockBackendProvider()
                        .open(new BackendConfig(
                                URI.create("zk://" + connect + "/bench-spi"),
                                Map.of("sessionTimeout", "30s"),
                                Duration.ofSeconds(30),
                                Duration.ofSeconds(10),
                                Ticker.system(),
                                Clock.systemUTC()));
                CuratorFramework client =
                        CuratorFrameworkFactory.newClient(connect, 30_000, 10_000, new RetryOneTime(100))) {
            client.start();
            client.blockUntilConnected();
            InterProcessMutex mutex = new InterProcessMutex(client, "/bench-curator/uncontended");
            long[] ours = new long[ROUNDS * PER_ROUND];
            long[] spi = new long[ROUNDS * PER_ROUND];
            long[] theirs = new long[ROUNDS * PER_ROUND];
            double[] roundRatios = new double[ROUNDS];
            distlock(locker, new long[WARM_UP], 0, WARM_UP);
            backendOnly(backend, new long[WARM_UP], 0, WARM_UP);
            curator(mutex, new long[WARM_UP], 0, WARM_UP);
            for (int round = 0; round < ROUNDS; round++) {
                int at = round * PER_ROUND;
                // rotate the order, so that no variant always runs first or last in a round
                for (int slot = 0; slot < 3; slot++) {
                    switch ((round + slot) % 3) {
                        case 0 -> distlock(locker, ours, at, PER_ROUND);
                        case 1 -> backendOnly(backend, spi, at, PER_ROUND);
                        default -> curator(mutex, theirs, at, PER_ROUND);
                    }
                }
                roundRatios[round] = Stats.of(Arrays.copyOfRange(ours, at, at + PER_ROUND)).mean
                        / Stats.of(Arrays.copyOfRange(theirs, at, at + PER_ROUND)).mean;
            }
            Stats d = Stats.of(ours);
            Stats b = Stats.of(spi);
            Stats c = Stats.of(theirs);
            line("## Uncontended acquire + release (" + ROUNDS + " rounds x " + PER_ROUND + " per variant, order"
                    + " rotated each round, after " + WARM_UP + " warm-up each)");
            line("");
            line("| | mean | p50 | p99 |");
            line("|---|---|---|---|");
            line("| distlock zk:// (RemoteLocker: the whole stack) | " + ms(d.mean) + " | " + ms(d.p50) + " | "
                    + ms(d.p99) + " |");
            line("| distlock ZooKeeper backend alone (SPI, no locker) | " + ms(b.mean) + " | " + ms(b.p50) + " | "
                    + ms(b.p99) + " |");
            line("| Curator InterProcessMutex | " + ms(c.mean) + " | " + ms(c.p50) + " | " + ms(c.p99) + " |");
            line(String.format(
                    Locale.ROOT,
                    "| ratio RemoteLocker / Curator | %.3f | %.3f | %.3f |",
                    d.mean / c.mean,
                    d.p50 / c.p50,
                    d.p99 / c.p99));
            line(String.format(
                    Locale.ROOT,
                    "| ratio backend alone / Curator | %.3f | %.3f | %.3f |",
                    b.mean / c.mean,
                    b.p50 / c.p50,
                    b.p99 / c.p99));
            line("");
            double[] sortedRatios = roundRatios.clone();
            Arrays.sort(sortedRatios);
            line(String.format(
                    Locale.ROOT,
                    "Per-round ratio of means RemoteLocker / Curator: median %.3f, min %.3f, max %.3f.",
                    sortedRatios[ROUNDS / 2],
                    sortedRatios[0],
                    sortedRatios[ROUNDS - 1]));
            line("");
        }
    }

    private static void backendOnly(LockBackend backend, long[] into, int at, int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            LockRequest request = new LockRequest("uncontended", "bench-" + i, Duration.ofSeconds(30), reason -> {});
            Lease lease = backend.acquire(request, Deadline.after(Duration.ofSeconds(10), Ticker.system()))
                    .orElseThrow();
            backend.release(lease);
            into[at + i] = System.nanoTime() - t0;
        }
    }

    private static void distlock(RemoteLocker locker, long[] into, int at, int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            RemoteLock lock = locker.lock("uncontended", Duration.ofSeconds(10));
            lock.close();
            into[at + i] = System.nanoTime() - t0;
        }
    }

    private static void curator(InterProcessMutex mutex, long[] into, int at, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            if (!mutex.acquire(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("uncontended Curator mutex not acquired");
            }
            mutex.release();
            into[at + i] = System.nanoTime() - t0;
        }
    }

    private void contended(String connect) throws Exception {
        line("## Contended: " + PROCESSES + " processes x " + PER_PROCESS + " acquisitions of one key, hold 0 ("
                + CONTENDED_ROUNDS + " rounds of one run per variant, order rotating)");
        line("");
        line("| run | acquisitions/s | mean wait | max wait | Jain (throughput) | Jain (mean wait) |");
        line("|---|---|---|---|---|---|");
        List<Contended> ours = new ArrayList<>();
        List<Contended> theirs = new ArrayList<>();
        double[] pairRatios = new double[CONTENDED_ROUNDS];
        List<Contended> spi = new ArrayList<>();
        for (int run = 0; run < CONTENDED_ROUNDS; run++) {
            String distlockPath = "/bench-distlock/" + KeyCodec.encode("contended-" + run);
            String spiPath = "/bench-spi/" + KeyCodec.encode("contended-" + run);
            String curatorPath = "/bench-curator/contended-" + run;
            Contended[] results = new Contended[3];
            // rotate the order, so that no variant always runs first or last
            for (int slot = 0; slot < 3; slot++) {
                int variant = (run + slot) % 3;
                results[variant] = switch (variant) {
                    case 0 -> runWorkers("distlock", connect, distlockPath);
                    case 1 -> runWorkers("spi", connect, spiPath);
                    default -> runWorkers("curator", connect, curatorPath);
                };
            }
            Contended d = results[0];
            Contended c = results[2];
            pairRatios[run] = d.rate / c.rate;
            ours.add(d);
            spi.add(results[1]);
            theirs.add(c);
            line(d.row("distlock #" + (run + 1)));
            line(results[1].row("backend alone (SPI) #" + (run + 1)));
            line(c.row("Curator #" + (run + 1)));
        }
        double dRate = ours.stream().mapToDouble(x -> x.rate).average().orElseThrow();
        double cRate = theirs.stream().mapToDouble(x -> x.rate).average().orElseThrow();
        line("");
        Arrays.sort(pairRatios);
        line(String.format(
                Locale.ROOT,
                "Per-pair rate ratio distlock / Curator: median %.3f, min %.3f, max %.3f.",
                pairRatios[CONTENDED_ROUNDS / 2],
                pairRatios[0],
                pairRatios[CONTENDED_ROUNDS - 1]));
        line(String.format(
                Locale.ROOT,
                "Mean rate: distlock %.0f/s, backend alone %.0f/s, Curator %.0f/s, ratio distlock / Curator %.3f."
                        + " Mean Jain (throughput): distlock %.4f, Curator %.4f.",
                dRate,
                spi.stream().mapToDouble(x -> x.rate).average().orElseThrow(),
                cRate,
                dRate / cRate,
                ours.stream().mapToDouble(x -> x.jainThroughput).average().orElseThrow(),
                theirs.stream().mapToDouble(x -> x.jainThroughput).average().orElseThrow()));
        line("");
    }

    private static Contended runWorkers(String impl, String connect, String path) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        long startAt = System.currentTimeMillis() + 4_000;
        List<Process> processes = new ArrayList<>();
        for (int p = 0; p < PROCESSES; p++) {
            processes.add(new ProcessBuilder(
                            java,
                            "-cp",
                            System.getProperty("java.class.path"),
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                            BenchWorker.class.getName(),
                            impl,
                            connect,
                            path,
                            Integer.toString(PER_PROCESS),
                            Long.toString(startAt))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start());
        }
        long[][] results = new long[PROCESSES][];
        try {
            for (int p = 0; p < PROCESSES; p++) {
                results[p] = result(processes.get(p));
            }
        } finally {
            for (Process process : processes) {
                process.destroyForcibly();
            }
        }
        return Contended.of(results);
    }

    private static long[] result(Process process) throws IOException, InterruptedException {
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.startsWith("RESULT ")) {
                    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
                    return Arrays.stream(line.substring(7).trim().split(" "))
                            .mapToLong(Long::parseLong)
                            .toArray();
                }
            }
        }
        process.waitFor(10, TimeUnit.SECONDS);
        throw new IllegalStateException("Worker ended without a result, exit " + process.exitValue());
    }

    /** One contended run: per process {n, sum of waits, max wait, elapsed}, all nanoseconds. */
    private record Contended(double rate, double meanWait, double maxWait, double jainThroughput, double jainWait) {

        static Contended of(long[][] r) {
            long total = 0;
            long sum = 0;
            long max = 0;
            long elapsed = 0;
            double[] throughput = new double[r.length];
            double[] meanWait = new double[r.length];
            for (int i = 0; i < r.length; i++) {
                total += r[i][0];
                sum += r[i][1];
                max = Math.max(max, r[i][2]);
                elapsed = Math.max(elapsed, r[i][3]);
                throughput[i] = r[i][0] / (r[i][3] / 1e9);
                meanWait[i] = (double) r[i][1] / r[i][0];
            }
            return new Contended(total / (elapsed / 1e9), (double) sum / total, max, jain(throughput), jain(meanWait));
        }

        String row(String name) {
            return String.format(
                    Locale.ROOT,
                    "| %s | %.0f | %s | %s | %.4f | %.4f |",
                    name,
                    rate,
                    ms(meanWait),
                    ms(maxWait),
                    jainThroughput,
                    jainWait);
        }
    }

    /** Jain's fairness index: (sum x)^2 / (n * sum x^2); 1 when all equal, 1/n when one gets everything. */
    static double jain(double[] x) {
        double sum = 0;
        double squares = 0;
        for (double v : x) {
            sum += v;
            squares += v * v;
        }
        return sum * sum / (x.length * squares);
    }

    private record Stats(double mean, double p50, double p99) {
        static Stats of(long[] samples) {
            long[] sorted = samples.clone();
            Arrays.sort(sorted);
            double mean = Arrays.stream(sorted).average().orElseThrow();
            return new Stats(
                    mean,
                    sorted[(int) (sorted.length * 0.50)],
                    sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)]);
        }
    }

    private static String ms(double nanos) {
        return String.format(Locale.ROOT, "%.3f ms", nanos / 1e6);
    }

    private void line(String text) {
        report.append(text).append('\n');
    }
}
