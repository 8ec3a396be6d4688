package io.distlock.cassandra;

import io.distlock.testing.CassandraCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Not a test: keeps one forked Cassandra node (or, with {@code -Ddistlock.cassandra.nodes=3}, three nodes and a keyspace
 * with RF = 3) up for {@code lockctl bench} when run with {@code -Ddistlock.cassandra.serve=<dir>}. Writes the store's
 * URI to {@code <dir>/uri} once it is ready and stops when {@code <dir>/stop} appears (or after two hours). See
 * docs/cassandra.md, "Measured".
 */
@EnabledIfSystemProperty(named = "distlock.cassandra.serve", matches = ".+")
class CassandraBenchServer {

    @RegisterExtension
    static final CassandraCluster CASSANDRA = CassandraCluster.builder()
            .withNodes(Integer.getInteger("distlock.cassandra.nodes", 1))
            .dedicated()
            .build();

    @Test
    void serve_untilTheStopFileAppears() throws Exception {
        Path dir = Path.of(System.getProperty("distlock.cassandra.serve"));
        Files.createDirectories(dir);
        Files.deleteIfExists(dir.resolve("stop"));
        String uri = "cassandra://" + CASSANDRA.contactPointsString() + "/" + CASSANDRA.keyspace() + "?localDatacenter="
                + CASSANDRA.localDatacenter() + "&createSchema=true";
        // Creates the tables once, so that the benchmark's workers find them.
        io.distlock.RemoteLockers.open(uri).close();
        Files.writeString(dir.resolve("uri.tmp"), uri);
        Files.move(dir.resolve("uri.tmp"), dir.resolve("uri"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        long end = System.nanoTime() + Duration.ofHours(2).toNanos();
        while (!Files.exists(dir.resolve("stop")) && System.nanoTime() - end < 0) {
            Thread.sleep(500);
        }
        Files.deleteIfExists(dir.resolve("uri"));
    }
}
