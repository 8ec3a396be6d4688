package io.distlock.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * The Cassandra server's classpath, for the forked JVM. The {@code cassandra-server-classpath} module writes it at
 * build time into the resource {@value #RESOURCE}, each jar relative to the local Maven repository (token
 * {@value #REPOSITORY_TOKEN}); here the token becomes the repository of the machine running the tests:
 * {@code -Dmaven.repo.local} (the build passes it to the tests) or else {@code ~/.m2/repository}.
 */
final class CassandraServerClasspath {

    static final String RESOURCE = "io/distlock/testing/cassandra-server.classpath";
    static final String REPOSITORY_TOKEN = "$MAVEN_REPOSITORY";
    static final String SERVER_ARTIFACT = "org.apache.cassandra:cassandra-all:5.0.9";

    private CassandraServerClasspath() {}

    /**
     * The jars, as one {@code :}-separated string.
     *
     * @throws IllegalStateException if the resource is missing or a listed jar is not in the local repository
     */
    static String resolve() {
        String raw = readResource();
        Path repository = localRepository();
        List<String> jars = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String entry : raw.trim().split(":")) {
            if (entry.isBlank()) {
                continue;
            }
            String jar = entry.startsWith(REPOSITORY_TOKEN)
                    ? repository + entry.substring(REPOSITORY_TOKEN.length())
                    : entry;
            if (!Files.isRegularFile(Paths.get(jar))) {
                missing.add(jar);
            }
            jars.add(jar);
        }
        if (jars.isEmpty()) {
            throw new IllegalStateException("The resource " + RESOURCE + " lists no jar");
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException(missing.size() + " jar(s) of the Cassandra server are not in the local"
                    + " Maven repository " + repository + ", e.g. " + missing.get(0) + ". Fetch them with: mvn"
                    + " dependency:get -Dartifact=" + SERVER_ARTIFACT + " (or pass -Dmaven.repo.local=<repository>)");
        }
        return String.join(":", jars);
    }

    private static String readResource() {
        try (InputStream in = CassandraServerClasspath.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("Resource " + RESOURCE + " not found: the artifact"
                        + " io.distlock:cassandra-server-classpath must be on the test classpath (it is a dependency"
                        + " of conformance-tests; build with ./mvnw -am)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + RESOURCE, e);
        }
    }

    private static Path localRepository() {
        String configured = System.getProperty("maven.repo.local");
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured.trim());
        }
        return Paths.get(System.getProperty("user.home"), ".m2", "repository");
    }
}
