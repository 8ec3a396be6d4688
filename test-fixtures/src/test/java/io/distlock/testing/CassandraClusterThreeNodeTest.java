package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import io.distlock.kit.TestTimeouts;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three dedicated forked nodes, RF 3: the driver sees three nodes through the proxies; with one node killed, QUORUM
 * reads and writes and a lightweight transaction still work; restarted, the node rejoins; the proxies really carry
 * every client connection.
 *
 * <p>Outside the build unless {@value #PROPERTY} is {@code true}: three forked nodes cost about two minutes, and the
 * backend's {@code CassandraThreeNodeTest} runs on this same three-node fixture in every build (nodes killed and
 * restarted through the kit's fault matrix), so a fixture that broke shows there too.
 */
@EnabledIfSystemProperty(named = CassandraClusterThreeNodeTest.PROPERTY, matches = "true")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CassandraClusterThreeNodeTest {

    /** The system property that runs this class. */
    static final String PROPERTY = "distlock.fixtures.threeNodeCassandra";

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().withNodes(3).dedicated().build();

    private static final Duration RECOVERY = Duration.ofSeconds(60);

    @BeforeAll
    static void createTable() {
        try (CqlSession session = CASSANDRA.newSession()) {
            session.execute("CREATE TABLE kv (k text PRIMARY KEY, v text)");
        }
    }

    @Test
    @Order(1)
    void keyspace_hasReplicationFactorThree() {
        try (CqlSession session = CASSANDRA.newSession()) {
            Row row = session.execute(
                            "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
                            CASSANDRA.keyspace())
                    .one();

            assertThat(CASSANDRA.replicationFactor()).isEqualTo(3);
            assertThat(row).isNotNull();
            assertThat(row.getMap("replication", String.class, String.class)).containsEntry("replication_factor", "3");
        }
    }

    @Test
    @Order(2)
    void allNodesUp_lwt_appliesOnce() {
        try (CqlSession session = CASSANDRA.newSession()) {
            ResultSet first = session.execute(
                    SimpleStatement.newInstance("INSERT INTO kv (k, v) VALUES (?, ?) IF NOT EXISTS", "up", "first"));
            ResultSet second = session.execute(
                    SimpleStatement.newInstance("INSERT INTO kv (k, v) VALUES (?, ?) IF NOT EXISTS", "up", "second"));

            assertThat(first.wasApplied()).isTrue();
            assertThat(second.wasApplied()).isFalse();
            assertThat(read(session, "up")).isEqualTo("first");
        }
    }

    @Test
    @Order(2)
    void driver_discoversEveryNode_atItsProxyAddress() {
        try (CqlSession session = CASSANDRA.newSession()) {
            Set<InetSocketAddress> endpoints = session.getMetadata().getNodes().values().stream()
                    .map(Node::getEndPoint)
                    .map(e -> (InetSocketAddress) e.resolve())
                    .collect(Collectors.toSet());

            assertThat(endpoints).containsExactlyInAnyOrderElementsOf(CASSANDRA.contactPoints());
        }
    }

    @Test
    @Order(4)
    void killedNode_restarted_rejoinsAndServesAllReads() {
        CASSANDRA.node(1).kill9();
        CASSANDRA.node(1).restart(); // blocks until every node sees every other up

        try (CqlSession session = CASSANDRA.newSession()) {
            write(session, "rejoined", "yes");
            Row row = eventually(
                    () -> session.execute(SimpleStatement.newInstance("SELECT v FROM kv WHERE k = ?", "rejoined")
                                    .setConsistencyLevel(ConsistencyLevel.ALL))
                            .one(),
                    RECOVERY);
            assertThat(row.getString("v")).isEqualTo("yes");
        }
    }

    @Test
    @Order(5)
    void everyProxyDropped_cutsClientsOff_andHealRestoresThem() {
        try (CqlSession session = CASSANDRA.newSession()) {
            write(session, "proxied", "before");
            CASSANDRA.nodes().forEach(ServerNode::disconnect);
            try {
                assertThatThrownBy(() -> read(session, "proxied")).isInstanceOf(DriverException.class);
            } finally {
                CASSANDRA.nodes().forEach(ServerNode::heal);
            }

            String value = eventually(() -> read(session, "proxied"), RECOVERY);
            assertThat(value).isEqualTo("before");
        }
    }

    @Test
    @Order(6)
    void pausedNode_seenDown_quorumStillWorks() {
        try (CqlSession session = CASSANDRA.newSession()) {
            CASSANDRA.node(0).pause();
            // Clients would otherwise wait on the frozen node until their request timeout: cut them off it too.
            CASSANDRA.node(0).disconnect();
            CASSANDRA.awaitSeenDown(0);

            write(session, "paused", "1");
            assertThat(read(session, "paused")).isEqualTo("1");
        } // resetFaults() resumes node 0, heals its proxy and waits until every node sees every other up
    }

    private static void write(CqlSession session, String k, String v) {
        session.execute(SimpleStatement.newInstance("INSERT INTO kv (k, v) VALUES (?, ?)", k, v)
                .setConsistencyLevel(ConsistencyLevel.QUORUM));
    }

    private static String read(CqlSession session, String k) {
        Row row = session.execute(SimpleStatement.newInstance("SELECT v FROM kv WHERE k = ?", k)
                        .setConsistencyLevel(ConsistencyLevel.QUORUM))
                .one();
        return row == null ? null : row.getString("v");
    }

    /** Retries {@code action} until it returns without a driver error, for at most {@code timeout} (scaled). */
    private static <T> T eventually(Supplier<T> action, Duration timeout) {
        long deadline = System.nanoTime() + TestTimeouts.scaled(timeout).toNanos();
        while (true) {
            try {
                return action.get();
            } catch (DriverException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
