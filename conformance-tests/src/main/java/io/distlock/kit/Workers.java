package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.toolkit.DurationText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker JVMs of one multi-process test and the directory they share; closing kills any still running and deletes
 * the directory.
 */
final class Workers implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Workers.class);

    private final Path dir;
    private final String uri;
    private final Duration ttl;
    private final Duration maxWait;
    private final List<Worker> started = new ArrayList<>();
    private volatile boolean kept;

    private Workers(Path dir, String uri, Duration ttl, Duration maxWait) {
        this.dir = dir;
        this.uri = uri;
        this.ttl = ttl;
        this.maxWait = maxWait;
    }

    /** A new shared directory under {@code java.io.tmpdir}, for workers opening {@code uri} with lease {@code ttl}. */
    static Workers create(String uri, Duration ttl, Duration maxWait) throws IOException {
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        Files.createDirectories(tmp);
        return new Workers(Files.createTempDirectory(tmp, "distlock-kit-"), uri, ttl, maxWait);
    }

    /** The directory the workers share (history, marker, counter, fenced resource). */
    Path dir() {
        return dir;
    }

    /**
     * Starts a worker running {@code mode} on {@code key}.
     *
     * @param threads threads in the worker
     * @param count critical sections per thread ({@code lock}, {@code trylock}) or holds ({@code hold})
     * @param holdMillis how long each hold lasts ({@code hold} only)
     */
    Worker start(String mode, String key, int threads, int count, long holdMillis) throws IOException {
        return start(mode, key, threads, count, holdMillis, Map.of());
    }

    /** {@link #start(String, String, int, int, long)} with further arguments ({@link WorkerMain} lists them). */
    Worker start(String mode, String key, int threads, int count, long holdMillis, Map<String, String> more)
            throws IOException {
        Map<String, String> args = new LinkedHashMap<>();
        args.put("uri", uri);
        args.put("ttlMillis", Long.toString(ttl.toMillis()));
        args.put("key", key);
        args.put("dir", dir.toString());
        args.put("mode", mode);
        args.put("threads", Integer.toString(threads));
        args.put("count", Integer.toString(count));
        args.put("holdMillis", Long.toString(holdMillis));
        args.put("maxWaitMillis", Long.toString(maxWait.toMillis()));
        // A worker may take as long to connect as the kit waits for it to open (unless the URI or the test sets its
        // own): with the locker's default (10 s), a worker JVM setting up TLS at load 10 gave up on every master
        // before it had contacted one.
        args.put("connectTimeoutMillis", Long.toString(startup().toMillis()));
        args.putAll(more);
        Worker worker = Worker.start(mode + "-" + started.size(), dir, args);
        started.add(worker);
        return worker;
    }

    List<Worker> all() {
        return List.copyOf(started);
    }

    /** How long a worker JVM may take to start and connect. */
    static Duration startup() {
        return TestTimeouts.scaled(Duration.ofSeconds(30));
    }

    /** Waits until every worker has said {@code prefix} (its store is open, say), at most {@code timeout} in all. */
    void awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        for (Worker worker : started) {
            awaitLine(worker, prefix, Deadlines.leftUntil(end));
        }
    }

    /** Waits until {@code worker} says {@code prefix}; returns the line. */
    static String awaitLine(Worker worker, String prefix, Duration timeout) throws InterruptedException {
        return worker.await(l -> l.startsWith(prefix + " "), timeout)
                .orElseThrow(() -> new AssertionError("no '" + prefix + "' from " + worker.name() + " within "
                        + DurationText.of(timeout) + "; " + worker.describe()));
    }

    /** The randomized run's acquisitions in every worker so far, as each last reported ({@code PROGRESS n}). */
    long progress() {
        long sum = 0;
        for (Worker worker : started) {
            sum += worker.last("PROGRESS")
                    .map(l -> Long.parseLong(l.substring("PROGRESS ".length())))
                    .orElse(0L);
        }
        return sum;
    }

    /** Waits for every worker to exit with DONE; returns the sums of their DONE fields (lowest: the minimum). */
    Map<String, Long> awaitDone(Duration timeout) throws InterruptedException {
        Map<String, Long> totals = new HashMap<>();
        long end = System.nanoTime() + timeout.toNanos();
        for (Worker worker : started) {
            int exit = worker.awaitExit(Deadlines.leftUntil(end));
            List<String> done = worker.lines("DONE");
            assertTrue(
                    exit == 0 && done.size() == 1,
                    () -> worker.name() + " failed (exit " + exit + "); " + worker.describe());
            for (String part : done.get(0).substring("DONE ".length()).split(" ")) {
                String[] kv = part.split("=");
                long value = Long.parseLong(kv[1]);
                totals.merge(kv[0], value, kv[0].equals("lowest") ? Math::min : Long::sum);
            }
        }
        return totals;
    }

    /**
     * Keeps the shared directory when the workers are closed (their histories, for a run that failed): it is deleted
     * otherwise.
     */
    void keep() {
        kept = true;
    }

    /** Kills every worker still running and deletes the shared directory, unless it is {@linkplain #keep kept}. */
    @Override
    public void close() {
        for (Worker worker : started) {
            worker.close();
        }
        if (kept) {
            return;
        }
        try (Stream<Path> tree = Files.walk(dir)) {
            for (Path path : (Iterable<Path>) tree.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            log.warn("Could not delete the workers' directory {}: {}", dir, e.toString());
        }
    }
}
