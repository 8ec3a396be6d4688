package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.LockBackendException;
import io.distlock.RemoteLockers;
import io.distlock.kit.LockerFixture;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.StoreFaults;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.CassandraCluster;
import io.distlock.testing.ServerNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The kit's hooks for a Cassandra cluster of the fixture: URIs, the lock tables' entries, a short lease, and the store's
 * faults on a dedicated cluster.
 */
interface CassandraKitHooks extends LockerFixture {

    /** One session per cluster for reading the tables (closed with the cluster's class). */
    Map<CassandraCluster, CqlSession> SESSIONS = new ConcurrentHashMap<>();

    /** The cluster of the test class. */
    CassandraCluster cluster();

    /** Options added to the URI, e.g. {@code fencing=true}; empty for none. */
    String options();

    @Override
    default String lockerUri() {
        return uri(cluster(), options());
    }

    /** The backend URI of the cluster's keyspace with {@code options}. */
    static String uri(CassandraCluster cluster, String options) {
        return "cassandra://" + cluster.contactPointsString() + "/" + cluster.keyspace() + "?localDatacenter="
                + cluster.localDatacenter() + "&createSchema=true" + (options.isEmpty() ? "" : "&" + options);
    }

    /**
     * Creates the lock tables once, before any locker of the class opens (each locker then finds them and creates
     * nothing): a locker opened with {@code createSchema=true}, the backend's own path. An attempt that fails on a
     * loaded machine (a schema change slower than its timeout) is made again (the statements are idempotent).
     */
    static void createSchema(CassandraCluster cluster) {
        long deadline =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofMinutes(4)).toNanos();
        while (true) {
            try {
                RemoteLockers.open(uri(cluster, "connectTimeout=60s")).close();
                return;
            } catch (LockBackendException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
            }
        }
    }

    /** Cassandra TTLs count whole seconds: the expiry tests use 2 s leases (written with a 3 s TTL). */
    @Override
    default Duration shortLeaseTime() {
        return TestTimeouts.scaled(Duration.ofSeconds(2));
    }

    /**
     * Worker processes connect with a 30 s connect timeout: several JVMs starting at once on a loaded machine, each
     * connecting to every node, took longer than the default 10 s.
     */
    @Override
    default MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.uri(lockerUri() + "&connectTimeout=30s");
    }

    @Override
    default Optional<String> unreachableUri() {
        return Optional.of("cassandra://127.0.0.1:1/kit");
    }

    /**
     * On a dedicated cluster (whose nodes the tests may stop): stops and starts every node, deletes a lock's owner cells
     * (and a legacy main cell) with a CQL {@code DELETE} as an operator would. The holder learns of the deletion at its
     * next renewal, a third of the lease after the last, plus that renewal's round trip. Empty on a shared cluster.
     */
    @Override
    default Optional<StoreFaults> storeFaults() {
        CassandraCluster cluster = cluster();
        List<ServerNode> nodes;
        try {
            nodes = cluster.nodes();
        } catch (UnsupportedOperationException shared) {
            return Optional.empty();
        }
        Duration renewalPeriod = leaseTime().dividedBy(3);
        return Optional.of(new StoreFaults() {
            @Override
            public void stopStore() {
                nodes.forEach(ServerNode::stop);
            }

            @Override
            public void startStore() {
                cluster.resetFaults();
            }

            @Override
            public void deleteLockEntry(String key) {
                CqlSession session = SESSIONS.computeIfAbsent(cluster, CassandraCluster::newSession);
                for (String table : List.of(CassandraStatements.OWNER_TABLE, CassandraStatements.LEGACY_MAIN_TABLE)) {
                    session.execute(SimpleStatement.newInstance("DELETE FROM " + table + " WHERE lock_id = ?", key)
                            .setConsistencyLevel(DefaultConsistencyLevel.QUORUM));
                }
            }

            @Override
            public Duration deletionNoticedWithin() {
                return renewalPeriod.plusSeconds(1);
            }
        });
    }

    @Override
    default Optional<List<String>> storeEntries(String key) {
        CqlSession session = SESSIONS.computeIfAbsent(cluster(), CassandraCluster::newSession);
        return Optional.of(entries(session, key));
    }

    /** Every cell of {@code key} in the lock tables (queue, owner, legacy main and shadow), one line each. */
    static List<String> entries(CqlSession session, String key) {
        List<String> cells = new ArrayList<>();
        for (String table : List.of(
                CassandraStatements.QUEUE_TABLE,
                CassandraStatements.OWNER_TABLE,
                CassandraStatements.LEGACY_MAIN_TABLE,
                CassandraStatements.LEGACY_SHADOW_TABLE)) {
            for (Row row : session.execute(
                    SimpleStatement.newInstance("SELECT * FROM " + table + " WHERE lock_id = ?", key))) {
                if (table.equals(CassandraStatements.QUEUE_TABLE) && row.isNull("ticket")) {
                    continue; // only the queue's low-water mark (a static cell): no lock's or waiter's entry
                }
                cells.add(table + ":" + row.getFormattedContents());
            }
        }
        return cells;
    }
}
