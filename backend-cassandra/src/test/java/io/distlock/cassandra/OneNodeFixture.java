package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.CassandraCluster;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The backend's own tests on one Cassandra node, shared with the kit's classes: the node, a keyspace per test class
 * with the lock tables, a session that reads them, and what those tests share (backends opened through the provider,
 * requests, key names, the cells a key left). Each subclass tests one concept.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
abstract class OneNodeFixture {

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().withNodes(1).build();

    static CqlSession session;

    @BeforeAll
    static void schema() {
        // Creates the tables once; the session reads them back.
        try (LockBackend backend = open("", Duration.ofSeconds(5))) {
            assertThat(backend.capabilities().fair()).isTrue();
        }
        session = CASSANDRA.newSession();
    }

    @AfterAll
    static void closeSession() {
        if (session != null) {
            session.close();
        }
    }

    static String uri(String options) {
        return CassandraKitHooks.uri(CASSANDRA, options);
    }

    static CassandraLockBackend open(String options, Duration lease) {
        return open(options, lease, Clock.systemUTC());
    }

    static CassandraLockBackend open(String options, Duration lease, Clock clock) {
        return open(CASSANDRA, options, lease, Duration.ofSeconds(20), clock);
    }

    /** A backend on {@code cluster}'s keyspace with {@code options}, opened through the provider. */
    static CassandraLockBackend open(
            CassandraCluster cluster, String options, Duration lease, Duration connectTimeout, Clock clock) {
        return open(cluster, options, lease, connectTimeout, Duration.ZERO, clock);
    }

    /** A backend on {@code cluster}'s keyspace with {@code options} and a lock-delay, opened through the provider. */
    static CassandraLockBackend open(
            CassandraCluster cluster,
            String options,
            Duration lease,
            Duration connectTimeout,
            Duration lockDelay,
            Clock clock) {
        String full = CassandraKitHooks.uri(cluster, options);
        URI bare = URI.create(full.substring(0, full.indexOf('?')));
        Map<String, String> map = new java.util.LinkedHashMap<>();
        for (String pair : full.substring(full.indexOf('?') + 1).split("&")) {
            map.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        }
        BackendConfig config = new BackendConfig(bare, map, lease, connectTimeout, lockDelay, Ticker.system(), clock);
        return (CassandraLockBackend) new CassandraLockBackendProvider().open(config);
    }

    static LockRequest request(String key, Duration lease) {
        return new LockRequest(key, UUID.randomUUID().toString(), lease, reason -> {});
    }

    /** The cells of {@code key} left in every lock table. */
    static List<String> cellsOf(String key) {
        return CassandraKitHooks.entries(session, key);
    }

    static String key(String name) {
        return "cq-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The cells of {@code key} in the queue table. */
    static long queueCells(String key) {
        return cellsOf(key).stream()
                .filter(c -> c.startsWith(CassandraStatements.QUEUE_TABLE))
                .count();
    }
}
