package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One shared forked node: it answers CQL, keeps what is written at QUORUM, and refuses faults. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CassandraClusterSingleNodeTest {

    @RegisterExtension
    static final CassandraCluster CASSANDRA = CassandraCluster.builder().build();

    @Test
    void start_answersCql_withTheServerVersion() {
        try (CqlSession session = CASSANDRA.newSession()) {
            Row row =
                    session.execute("SELECT release_version FROM system.local").one();

            assertThat(row).isNotNull();
            assertThat(row.getString("release_version")).isEqualTo("5.0.9");
        }
    }

    @Test
    void keyspace_isReplicatedOnce() {
        try (CqlSession session = CASSANDRA.newSession()) {
            Row row = session.execute(
                            "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
                            CASSANDRA.keyspace())
                    .one();

            assertThat(row).isNotNull();
            assertThat(row.getMap("replication", String.class, String.class)).containsEntry("replication_factor", "1");
            assertThat(session.getMetadata()
                            .getKeyspace(CASSANDRA.keyspace())
                            .orElseThrow()
                            .getTables())
                    .isEmpty();
        }
    }

    @Test
    void createTable_thenQuorumWrite_isReadBackAtQuorum() {
        try (CqlSession session = CASSANDRA.newSession()) {
            session.execute("CREATE TABLE kv (k text PRIMARY KEY, v text)");
            session.execute(SimpleStatement.newInstance("INSERT INTO kv (k, v) VALUES (?, ?)", "a", "1")
                    .setConsistencyLevel(ConsistencyLevel.QUORUM));

            Row row = session.execute(SimpleStatement.newInstance("SELECT v FROM kv WHERE k = ?", "a")
                            .setConsistencyLevel(ConsistencyLevel.QUORUM))
                    .one();

            assertThat(row).isNotNull();
            assertThat(row.getString("v")).isEqualTo("1");
        }
    }

    @Test
    void contactPoints_areTheAdvertisedProxyAddresses() {
        assertThat(CASSANDRA.contactPoints()).hasSize(1);
        assertThat(CASSANDRA.contactPointsString()).startsWith("127.0.1.1:");
    }

    @Test
    void faultControls_onSharedCluster_areRefused() {
        assertThatThrownBy(() -> CASSANDRA.node(0))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("dedicated()");
        assertThatThrownBy(() -> CASSANDRA.awaitSeenDown(0)).isInstanceOf(UnsupportedOperationException.class);
    }
}
