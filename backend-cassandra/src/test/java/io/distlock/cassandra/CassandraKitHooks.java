package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.LockBackendException;
import io.distlock.LockKind;
import io.distlock.RemoteLockers;
import io.distlock.kit.ClientPartition;
import io.distlock.kit.LockerFixture;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.NodeFaults;
import io.distlock.kit.StoreFaults;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.CassandraCluster;
import io.distlock.testing.KitFaults;
import io.distlock.testing.ServerNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The kit's hooks for a Cassandra cluster of the fixture: URIs, the lock tables' entries, a short lease, and the store's
 * faults on a dedicated cluster: the whole store stopped, a lock's cells deleted, single nodes killed or paused (three
 * nodes), and lockers cut off through the node's proxy (one node, {@link #directToTheNode()}).
 */
interface CassandraKitHooks extends LockerFixture {

    /** One session per cluster for reading the tables (closed with the cluster's class). */
    Map<CassandraCluster, CqlSession> SESSIONS = new ConcurrentHashMap<>();

    /** The cluster of the test class. */
    CassandraCluster cluster();

    /** Options added to the URI, e.g. {@code fencing=true}; empty for none. */
    String options();

    /**
     * Whether the kit's lockers connect to the node itself rather than through its proxy, so that lockers built through
     * the proxy can be cut off alone ({@link StoreFaults#clientPartition()}); false by default. For a dedicated
     * one-node cluster only: with several nodes the driver learns the others from {@code system.peers}, where each
     * node advertises its proxy, so no locker can bypass the proxies. The driver keeps the contact point it was given
     * for the node it connects to, so with one node a direct locker stays direct and a proxied one stays proxied.
     */
    default boolean directToTheNode() {
        return false;
    }

    @Override
    default String lockerUri() {
        return directToTheNode() ? uri(cluster().node(0).endpoint(), cluster(), options()) : uri(cluster(), options());
    }

    /** The backend URI of the cluster's keyspace with {@code options}, through the nodes' proxies. */
    static String uri(CassandraCluster cluster, String options) {
        return uri(cluster.contactPointsString(), cluster, options);
    }

    /** The backend URI of the cluster's keyspace at {@code hosts} with {@code options}. */
    static String uri(String hosts, CassandraCluster cluster, String options) {
        return "cassandra://" + hosts + "/" + cluster.keyspace() + "?localDatacenter=" + cluster.localDatacenter()
                + "&createSchema=true" + (options.isEmpty() ? "" : "&" + options);
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
     * next renewal, a third of the lease after the last, plus that renewal's round trip. With three nodes (RF 3,
     * {@code QUORUM}: two must answer) single nodes are killed and paused, and a grant may wait twice the nodes' read
     * timeout longer after a kill (a read whose coordinator picked the dead replica waits for it until that timeout,
     * and the next may too until the survivors convict it: 16.8 s for one grant in a quiet run, 21.1 s in a loaded
     * CI run); with {@link #directToTheNode()} lockers built on the node's proxy are cut off. Empty on a shared
     * cluster.
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
        Optional<ClientPartition> partition = directToTheNode()
                ? Optional.of(
                        KitFaults.partition(nodes, () -> RemoteLockers.builder().uri(uri(cluster, options()))))
                : Optional.empty();
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
                withSession(cluster, session -> {
                    for (String table :
                            List.of(CassandraStatements.OWNER_TABLE, CassandraStatements.LEGACY_MAIN_TABLE)) {
                        for (String partition : partitions(key)) {
                            session.execute(SimpleStatement.newInstance(
                                            "DELETE FROM " + table + " WHERE lock_id = ?", partition)
                                    .setConsistencyLevel(DefaultConsistencyLevel.QUORUM));
                        }
                    }
                    return null;
                });
            }

            @Override
            public Duration deletionNoticedWithin() {
                return renewalPeriod.plusSeconds(1);
            }

            @Override
            public Optional<NodeFaults> nodeFaults() {
                return nodes.size() < 3
                        ? Optional.empty()
                        : Optional.of(KitFaults.nodes(
                                nodes,
                                KitFaults.majority(nodes),
                                CassandraCluster.serverReadTimeout().multipliedBy(2),
                                cluster::resetFaults));
            }

            @Override
            public Optional<ClientPartition> clientPartition() {
                return partition;
            }
        });
    }

    @Override
    default Optional<List<String>> storeEntries(String key) {
        return Optional.of(withSession(cluster(), session -> entries(session, key)));
    }

    /**
     * Runs {@code work} on the class's reading session. While no node is available it tries again on new sessions, for
     * up to three minutes (scaled): after the store restarted, the old session reconnects only after its driver's
     * back-off (up to a minute), and a restart of three nodes may still be under way (the kit checks the store right
     * after its outage).
     */
    static <T> T withSession(CassandraCluster cluster, Function<CqlSession, T> work) {
        long deadline =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofMinutes(3)).toNanos();
        while (true) {
            CqlSession session = null;
            try {
                session = SESSIONS.computeIfAbsent(cluster, CassandraCluster::newSession);
                return work.apply(session);
            } catch (AllNodesFailedException e) {
                if (session != null) {
                    SESSIONS.remove(cluster, session);
                    session.close();
                }
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The partitions of {@code key}: the lock's, the read-write lock's and the semaphore's. */
    static List<String> partitions(String key) {
        return List.of(key, SharedEntries.partition(LockKind.READ, key), SharedEntries.partition(LockKind.PERMIT, key));
    }

    /**
     * Every cell of {@code key} in the lock tables (queue, owner, legacy main and shadow), of the lock, the read-write
     * lock and the semaphore, one line each. Read at {@code QUORUM}, as the backend writes: a read of one replica may
     * miss a write it has not received yet.
     */
    static List<String> entries(CqlSession session, String key) {
        List<String> cells = new ArrayList<>();
        for (String partition : partitions(key)) {
            cells.addAll(entriesOfPartition(session, partition));
        }
        return cells;
    }

    /** Every cell of one partition in the lock tables, one line each, read at {@code QUORUM}. */
    static List<String> entriesOfPartition(CqlSession session, String key) {
        List<String> cells = new ArrayList<>();
        for (String table : List.of(
                CassandraStatements.QUEUE_TABLE,
                CassandraStatements.OWNER_TABLE,
                CassandraStatements.LEGACY_MAIN_TABLE,
                CassandraStatements.LEGACY_SHADOW_TABLE)) {
            for (Row row :
                    session.execute(SimpleStatement.newInstance("SELECT * FROM " + table + " WHERE lock_id = ?", key)
                            .setConsistencyLevel(DefaultConsistencyLevel.QUORUM))) {
                if (table.equals(CassandraStatements.QUEUE_TABLE) && row.isNull("ticket")) {
                    continue; // only the queue's low-water mark (a static cell): no lock's or waiter's entry
                }
                cells.add(table + ":" + row.getFormattedContents());
            }
        }
        return cells;
    }
}
