package io.distlock.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * Finds a JDK that can run the Cassandra server: Cassandra 5.0 runs on Java 11 and 17 only (on 21+ it fails at start
 * with "Setting a system-wide Policy object is not supported"). Order: the environment variable {@value #ENV}, this
 * JVM's {@code java.home} if it is 11..17, {@code JAVA_HOME} if it is 11..17, then the usual Linux install directories.
 */
final class CassandraJdk {

    /** Environment variable naming the home of a JDK 11 or 17 for the Cassandra server. */
    static final String ENV = "DISTLOCK_CASSANDRA_JAVA_HOME";

    private static final int MIN_FEATURE = 11;
    private static final int MAX_FEATURE = 17;
    private static final Path JVM_DIR = Paths.get("/usr/lib/jvm");

    private CassandraJdk() {}

    /**
     * The {@code java} executable of a suitable JDK.
     *
     * @throws IllegalStateException if {@value #ENV} names an unsuitable directory
     * @return empty if no suitable JDK is found (see {@link #missingMessage()})
     */
    static Optional<Path> find() {
        String fromEnv = System.getenv(ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            Path home = Paths.get(fromEnv.trim());
            int feature = featureVersion(home)
                    .orElseThrow(() -> new IllegalStateException(
                            ENV + "=" + fromEnv + " is not a JDK home (no bin/java or no 'release' file)"));
            if (!suitable(feature)) {
                throw new IllegalStateException(ENV + "=" + fromEnv + " is Java " + feature
                        + "; Cassandra 5.0 needs Java " + MIN_FEATURE + " or " + MAX_FEATURE);
            }
            return Optional.of(javaOf(home));
        }
        List<Path> candidates = new ArrayList<>();
        candidates.add(Paths.get(System.getProperty("java.home")));
        String javaHome = System.getenv("JAVA_HOME");
        if (javaHome != null && !javaHome.isBlank()) {
            candidates.add(Paths.get(javaHome.trim()));
        }
        candidates.addAll(installedJdks());
        for (Path home : candidates) {
            if (featureVersion(home).filter(CassandraJdk::suitable).isPresent()) {
                return Optional.of(javaOf(home));
            }
        }
        return Optional.empty();
    }

    /** Says what is missing and how to get it, for the error raised when {@link #find()} is empty. */
    static String missingMessage() {
        return "The Cassandra server needs a JDK " + MIN_FEATURE + " or " + MAX_FEATURE + " (it fails on Java 21+), and"
                + " none was found (this JVM is Java " + Runtime.version().feature() + "). Install one"
                + " (Debian/Ubuntu: apt-get install -y openjdk-17-jdk-headless) or set " + ENV
                + " to the home of a JDK 17";
    }

    private static boolean suitable(int feature) {
        return feature >= MIN_FEATURE && feature <= MAX_FEATURE;
    }

    private static Path javaOf(Path home) {
        return home.resolve("bin").resolve("java");
    }

    /** JDK homes under /usr/lib/jvm, the 17s first. */
    private static List<Path> installedJdks() {
        if (!Files.isDirectory(JVM_DIR)) {
            return List.of();
        }
        try (Stream<Path> dirs = Files.list(JVM_DIR)) {
            return dirs.filter(Files::isDirectory)
                    .sorted((a, b) -> Boolean.compare(
                            !a.getFileName().toString().contains("17"),
                            !b.getFileName().toString().contains("17")))
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The feature version (11, 17, ...) from the JDK's {@code release} file, if it is a JDK with a java binary. */
    static Optional<Integer> featureVersion(Path home) {
        Path release = home.resolve("release");
        if (!Files.isExecutable(javaOf(home)) || !Files.isRegularFile(release)) {
            return Optional.empty();
        }
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(release)) {
            props.load(in);
        } catch (IOException e) {
            return Optional.empty();
        }
        String version = props.getProperty("JAVA_VERSION", "").replace("\"", "").trim();
        try {
            return Optional.of(Runtime.Version.parse(version).feature());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
