package io.distlock.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Directories for fixture data and logs: {@code target/distlock-fixtures/<name>-<n>} under the working directory (the
 * module directory when run by Maven), so {@code mvn clean} removes them and nothing lands in the system temp dir.
 */
final class FixtureDirs {

    /** Overrides the base directory (default {@code target/distlock-fixtures} under the working directory). */
    static final String BASE_PROPERTY = "distlock.fixtures.dir";

    private static final AtomicInteger COUNTER = new AtomicInteger();

    private FixtureDirs() {}

    /** The base directory, created if missing. */
    static Path base() {
        String configured = System.getProperty(BASE_PROPERTY);
        Path base = configured != null && !configured.isBlank()
                ? Paths.get(configured)
                : Paths.get("target", "distlock-fixtures");
        return createDirectories(base.toAbsolutePath());
    }

    /** A new, empty directory named after {@code name}, unique within this run. */
    static Path create(String name) {
        long run = ProcessHandle.current().pid();
        return createDirectories(base().resolve(name + "-" + run + "-" + COUNTER.incrementAndGet()));
    }

    /**
     * Something that deletes {@code dir} and everything under it when closed, for data a fixture need not keep (an
     * etcd WAL preallocates 64 MB). Logs are kept elsewhere for post-mortems.
     */
    static AutoCloseable deleteOnClose(Path dir) {
        return new AutoCloseable() {
            @Override
            public void close() throws IOException {
                if (!Files.exists(dir)) {
                    return;
                }
                try (Stream<Path> paths = Files.walk(dir)) {
                    for (Path p : paths.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                        Files.deleteIfExists(p);
                    }
                }
            }

            @Override
            public String toString() {
                return "deletion of " + dir;
            }
        };
    }

    private static Path createDirectories(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create fixture directory " + dir, e);
        }
    }
}
