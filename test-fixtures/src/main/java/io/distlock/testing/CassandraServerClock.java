package io.distlock.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * A clock a forked Cassandra node can be told to run ahead of (or behind) the real one, for tests of clock skew: the
 * server's own pluggable clock ({@code -Dcassandra.clock}, {@code org.apache.cassandra.utils.Clock} of cassandra-all
 * 5.0), which every TTL and expiry decision of the node reads. The class is compiled once per JVM against the server's
 * classpath and put in front of it; it reads its offset in milliseconds from a file in the node's directory every
 * 20 ms. Only wall-clock time moves; the node's monotonic time does not.
 */
final class CassandraServerClock {

    static final String CLASS_NAME = "io.distlock.testing.server.OffsetClock";

    private static final String SOURCE =
            """
            package io.distlock.testing.server;

            import java.nio.file.Files;
            import java.nio.file.Path;

            /** The node's wall clock plus the offset in the file named by -Ddistlock.clock.offsetFile. */
            public final class OffsetClock implements org.apache.cassandra.utils.Clock {
                private static volatile long offsetMillis;

                static {
                    Thread watcher = new Thread(OffsetClock::watch, "distlock-clock-offset");
                    watcher.setDaemon(true);
                    watcher.start();
                }

                public OffsetClock() {}

                @Override
                public long nanoTime() {
                    return System.nanoTime();
                }

                @Override
                public long currentTimeMillis() {
                    return System.currentTimeMillis() + offsetMillis;
                }

                private static void watch() {
                    Path file = Path.of(System.getProperty("distlock.clock.offsetFile"));
                    while (true) {
                        try {
                            if (Files.exists(file)) {
                                offsetMillis = Long.parseLong(Files.readString(file).trim());
                            }
                        } catch (Exception e) {
                            // a file being rewritten: read it again at the next round
                        }
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }
            """;

    private static Path compiled;

    private CassandraServerClock() {}

    /**
     * The directory holding the compiled clock class (compiled on first use against {@code serverClasspath}).
     *
     * @throws IllegalStateException if this JVM has no Java compiler or the source does not compile
     */
    static synchronized Path classes(String serverClasspath) {
        if (compiled != null) {
            return compiled;
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            throw new IllegalStateException("A Cassandra node with a skewable clock needs a JDK (javax.tools) to run"
                    + " the tests, not a JRE: " + System.getProperty("java.home"));
        }
        Path base = FixtureDirs.create("cassandra-clock");
        Path source = base.resolve("src/io/distlock/testing/server/OffsetClock.java");
        Path out = base.resolve("classes");
        try {
            Files.createDirectories(source.getParent());
            Files.createDirectories(out);
            Files.writeString(source, SOURCE, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the clock's source in " + base, e);
        }
        int status = javac.run(
                null, null, null, "--release", "11", "-cp", serverClasspath, "-d", out.toString(), source.toString());
        if (status != 0) {
            throw new IllegalStateException("The Cassandra server clock did not compile (status " + status + ")");
        }
        compiled = out;
        return out;
    }

    /** The classpath of a node with the clock: its class first. */
    static String classpath(String serverClasspath) {
        return classes(serverClasspath) + File.pathSeparator + serverClasspath;
    }

    /** The JVM flags that make a node in {@code nodeDirectory} use the clock. */
    static List<String> flags(Path nodeDirectory) {
        return List.of("-Dcassandra.clock=" + CLASS_NAME, "-Ddistlock.clock.offsetFile=" + offsetFile(nodeDirectory));
    }

    /**
     * Sets the offset of the clock of the node in {@code nodeDirectory}; the node reads it within about 20 ms (the
     * caller waits 100 ms to be sure).
     */
    static void setOffset(Path nodeDirectory, Duration offset) {
        Path file = offsetFile(nodeDirectory);
        Path next = file.resolveSibling(file.getFileName() + ".next");
        try {
            Files.writeString(next, Long.toString(offset.toMillis()), StandardCharsets.UTF_8);
            Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            Thread.sleep(100);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot set the clock offset of the node in " + nodeDirectory, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Path offsetFile(Path nodeDirectory) {
        return nodeDirectory.resolve("clock-offset-millis");
    }
}
