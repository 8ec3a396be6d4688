package io.distlock.kit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
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
        Worker worker = Worker.start(mode + "-" + started.size(), dir, args);
        started.add(worker);
        return worker;
    }

    List<Worker> all() {
        return List.copyOf(started);
    }

    /** Kills every worker still running and deletes the shared directory. */
    @Override
    public void close() {
        for (Worker worker : started) {
            worker.close();
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
