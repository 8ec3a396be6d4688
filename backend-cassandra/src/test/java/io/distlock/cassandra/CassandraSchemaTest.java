package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The lock tables on one node: opening without them or without the keyspace, in a data center with no node or on a
 * keyspace replicated more than one node can answer for, fails naming the fix; the tables {@code
 * createSchema=true} makes keep tombstones a day and the low-water mark as long, or {@code keyRetention}.
 */
class CassandraSchemaTest extends OneNodeFixture {

    @Test
    void open_withoutTables_failsNamingCreateSchema() {
        session.execute("CREATE KEYSPACE IF NOT EXISTS distlock_no_tables WITH replication = "
                + "{'class': 'SimpleStrategy', 'replication_factor': 1}");
        String noTables = "cassandra://" + CASSANDRA.contactPointsString() + "/distlock_no_tables?localDatacenter="
                + CASSANDRA.localDatacenter();
        try {
            assertThatThrownBy(() -> RemoteLockers.open(noTables).close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("createSchema=true")
                    .hasMessageContaining("CREATE TABLE IF NOT EXISTS distlock_no_tables.distlock_queue");
        } finally {
            session.execute("DROP KEYSPACE IF EXISTS distlock_no_tables");
        }
    }

    @Test
    void open_missingKeyspace_failsNamingIt() {
        String missing = "cassandra://" + CASSANDRA.contactPointsString() + "/no_such_keyspace?localDatacenter="
                + CASSANDRA.localDatacenter();
        assertThatThrownBy(() -> RemoteLockers.open(missing).close())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("Keyspace 'no_such_keyspace' does not exist")
                .hasMessageContaining("CREATE KEYSPACE no_such_keyspace")
                .hasMessageContaining("on fewer, as many as there are nodes");
    }

    @Test
    void open_inADatacenterWithNoNode_failsAtOnceNamingTheClustersDatacenters() {
        String elsewhere =
                "cassandra://" + CASSANDRA.contactPointsString() + "/" + CASSANDRA.keyspace() + "?localDatacenter=dc9";
        assertThatThrownBy(() -> RemoteLockers.open(elsewhere).close())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("is in the session's local data center (option localDatacenter")
                .hasMessageContaining(
                        "the cluster's nodes are in data center '" + CASSANDRA.localDatacenter() + "' (1 node)");
    }

    @Test
    void open_onAKeyspaceReplicatedMoreThanItsNodesCanAnswer_failsAtOnceNamingTheFix() {
        // A replication factor of 3 on one node: a quorum of 2 replicas never answers, whatever the node's health.
        try {
            assertThatThrownBy(() ->
                            openOnKeyspace("distlock_rf3", "{'class': 'SimpleStrategy', 'replication_factor': 3}", ""))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Keyspace 'distlock_rf3'")
                    .hasMessageContaining("can never answer a lock at consistency QUORUM")
                    .hasMessageContaining(
                            "it keeps 3 replicas of each key (SimpleStrategy) and a quorum of 2 must answer, but only"
                                    + " 1 node")
                    .hasMessageContaining("ALTER KEYSPACE distlock_rf3 WITH replication = {'class': 'SimpleStrategy',"
                            + " 'replication_factor': 1}");
            String local = CASSANDRA.localDatacenter();
            assertThatThrownBy(() -> openOnKeyspace(
                            "distlock_rf3",
                            "{'class': 'NetworkTopologyStrategy', '" + local + "': 2}",
                            "&consistency=LOCAL_QUORUM"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("at consistency LOCAL_QUORUM")
                    .hasMessageContaining("2 replicas of each key in the local data center '" + local + "'")
                    .hasMessageContaining("{'class': 'NetworkTopologyStrategy', '" + local + "': 1}");
            // The same keyspace at RF 1 opens and locks.
            try (RemoteLocker locker =
                    openOnKeyspace("distlock_rf3", "{'class': 'NetworkTopologyStrategy', '" + local + "': 1}", "")) {
                assertThat(locker.tryLock("placed")).isPresent();
            }
        } finally {
            session.execute("DROP KEYSPACE IF EXISTS distlock_rf3");
        }
    }

    /** Opens a locker on keyspace {@code name}, made (or altered) to {@code replication}. */
    private static RemoteLocker openOnKeyspace(String name, String replication, String options) {
        session.execute("CREATE KEYSPACE IF NOT EXISTS " + name + " WITH replication = " + replication);
        session.execute("ALTER KEYSPACE " + name + " WITH replication = " + replication);
        return RemoteLockers.open("cassandra://" + CASSANDRA.contactPointsString() + "/" + name
                + "?createSchema=true&localDatacenter=" + CASSANDRA.localDatacenter() + options);
    }

    @Test
    void createSchema_tablesKeepTombstonesOneDay_andTheMarkLivesAsLong() {
        // The class's tables were made by createSchema=true (CassandraKitHooks.uri), without keyRetention.
        for (String table : List.of("distlock_queue", "distlock_owner")) {
            assertThat(session.execute(
                                    "SELECT gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = ? AND"
                                            + " table_name = ?",
                                    CASSANDRA.keyspace(),
                                    table)
                            .one()
                            .getInt(0))
                    .as(table)
                    .isEqualTo(86_400);
        }
        String key = key("retention-default");
        try (CassandraLockBackend backend = open("", Duration.ofSeconds(5))) {
            assertThat(backend.release(backend.tryAcquire(request(key, Duration.ofSeconds(5)))
                            .orElseThrow()))
                    .isTrue();
        }
        assertThat(markTtl(key)).isBetween(86_400 - 120, 86_400);
    }

    @Test
    void release_withShortKeyRetention_theMarkExpires_andTheKeyIsExclusiveAgain() throws Exception {
        // Lease 1 s (TTL 2 s) and connectTimeout 3 s: a retention must exceed 5 s.
        Duration lease = Duration.ofSeconds(1);
        Duration connect = Duration.ofSeconds(3);
        String options = "keyRetention=6s";
        String key = key("retention");
        try (CassandraLockBackend a = open(CASSANDRA, options, lease, connect, Clock.systemUTC())) {
            assertThat(a.release(a.tryAcquire(request(key, lease)).orElseThrow()))
                    .isTrue();
            assertThat(markTtl(key)).isBetween(1, 6);
            Deadline gone = Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(30)), Ticker.system());
            while (markTtl(key) != null) {
                assertThat(gone.hasPassed())
                        .as("the mark of %s still there", key)
                        .isFalse();
                Thread.sleep(200);
            }
            assertThat(session.execute(
                                    "SELECT ticket FROM " + CassandraStatements.QUEUE_TABLE + " WHERE lock_id = ?", key)
                            .one())
                    .isNull();
            // Taken again: by a locker that never met the key (it reads no mark) and by one that remembers the old
            // mark; each excludes the other.
            try (CassandraLockBackend fresh = open(CASSANDRA, options, lease, connect, Clock.systemUTC())) {
                Lease held = fresh.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(a.tryAcquire(request(key, lease))).isEmpty();
                assertThat(fresh.release(held)).isTrue();
                Lease again = a.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(fresh.tryAcquire(request(key, lease))).isEmpty();
                assertThat(a.release(again)).isTrue();
            }
            assertThat(cellsOf(key)).isEmpty();
            assertThat(markTtl(key)).isBetween(1, 6);
        }
    }

    /** The TTL left on {@code key}'s low-water mark, or null if it has none. */
    private static Integer markTtl(String key) {
        Row row = session.execute("SELECT TTL(low) FROM " + CassandraStatements.QUEUE_TABLE + " WHERE lock_id = ?", key)
                .one();
        return row == null || row.isNull(0) ? null : row.getInt(0);
    }
}
