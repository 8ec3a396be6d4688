package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.loadbalancing.NodeDistance;
import com.datastax.oss.driver.api.core.metadata.Node;
import io.distlock.LockBackendException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Checks at opening that the cluster can answer a lock's requests at all, whatever its nodes' health: two set-ups
 * that look like an outage in the driver's words but never pass by waiting. A session whose local data center has no
 * node (a misspelt {@code localDatacenter}: the driver sends requests to the local data center's nodes only, and
 * answers "No node was available"); and a keyspace that keeps more replicas of a key than the cluster can ever make
 * answer for the locker's consistency (a replication factor of 3 on one node: "Not enough replicas available"). The
 * nodes counted are those the driver knows, up or down, so a node that is down counts: that is an outage.
 */
final class CassandraPlacement {

    private CassandraPlacement() {}

    /**
     * Fails when no node of the cluster is local to {@code session}: every request would fail with the driver's "No
     * node was available to execute the query".
     *
     * @throws LockBackendException naming the data centers the cluster's nodes are in
     */
    static void checkLocalNodes(CqlSession session, CassandraSettings settings) {
        Map<String, Long> nodes = nodesPerDatacenter(session);
        boolean anyUsed = session.getMetadata().getNodes().values().stream()
                .anyMatch(n -> n.getDistance() != NodeDistance.IGNORED);
        if (anyUsed || nodes.isEmpty()) {
            return;
        }
        throw new LockBackendException(
                "No node of Cassandra at " + settings.location().hosts() + " is in the"
                        + " session's local data center (option " + CassandraLockOptions.LOCAL_DATACENTER + ", '"
                        + CassandraLockOptions.DEFAULT_LOCAL_DATACENTER + "' by default, or the driver configuration's"
                        + " local-datacenter), the only one the driver sends requests to; the cluster's nodes are in "
                        + describe(nodes) + ": name one of those");
    }

    /**
     * Fails when keyspace {@code settings.location().keyspace()} keeps each key on more replicas than the cluster's
     * nodes can make answer for the locker's consistency and serial consistency: fewer nodes than a quorum of the
     * replication factor (with {@code QUORUM}, {@code SERIAL} and the {@code LOCAL_} levels) or than the factor
     * itself (with {@code ALL}). Strategies other than {@code SimpleStrategy} and {@code NetworkTopologyStrategy},
     * and a replication it cannot read, are not checked.
     *
     * @throws LockBackendException naming the keyspace's replication, the nodes, the level and the fix
     */
    static void checkReplication(CqlSession session, CassandraSettings settings, Duration timeout) {
        String keyspace = settings.location().keyspace();
        Map<String, String> replication;
        try {
            Row row = session.execute(SimpleStatement.newInstance(
                                    "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", keyspace)
                            .setTimeout(timeout))
                    .one();
            if (row == null) {
                return;
            }
            replication = row.getMap(0, String.class, String.class);
        } catch (DriverException e) {
            return; // the lock path's first request names what fails; this check only adds a clearer refusal
        }
        Map<String, Long> nodes = nodesPerDatacenter(session);
        String localDc = localDatacenter(session);
        for (ConsistencyLevel level : List.of(settings.consistency(), settings.serialConsistency())) {
            Optional<String> never = never(replication, nodes, localDc, level);
            if (never.isPresent()) {
                throw new LockBackendException("Keyspace '" + keyspace + "' of Cassandra at "
                        + settings.location().hosts() + " can never answer a lock at consistency " + level + ": "
                        + never.get() + " (" + describe(nodes) + "); lower its replication to at most the nodes"
                        + " there, e.g. ALTER KEYSPACE " + keyspace + " WITH replication = " + fix(replication, nodes)
                        + ", or add nodes");
            }
        }
    }

    /** Why {@code level} can never be met, if it cannot. */
    private static Optional<String> never(
            Map<String, String> replication, Map<String, Long> nodes, String localDc, ConsistencyLevel level) {
        String strategy = replication.getOrDefault("class", "");
        boolean all = level == DefaultConsistencyLevel.ALL;
        if (strategy.endsWith("SimpleStrategy")) {
            int factor = factor(replication.get("replication_factor"));
            long total = nodes.values().stream().mapToLong(Long::longValue).sum();
            return shortOf(factor, Math.min(factor, total), all, factor + " replicas of each key (SimpleStrategy)");
        }
        if (!strategy.endsWith("NetworkTopologyStrategy")) {
            return Optional.empty();
        }
        Map<String, Integer> factors = new TreeMap<>();
        replication.forEach((k, v) -> {
            if (!k.equals("class")) {
                factors.put(k, factor(v));
            }
        });
        if (level.isDcLocal()) {
            if (localDc == null) {
                return Optional.empty();
            }
            int factor = factors.getOrDefault(localDc, 0);
            if (factor == 0) {
                return Optional.of("it keeps no replica in the local data center '" + localDc + "'");
            }
            return shortOf(
                    factor,
                    Math.min(factor, nodes.getOrDefault(localDc, 0L)),
                    all,
                    factor + " replicas of each key in the local data center '" + localDc + "'");
        }
        int factor = factors.values().stream().mapToInt(Integer::intValue).sum();
        long replicas = factors.entrySet().stream()
                .mapToLong(e -> Math.min(e.getValue(), nodes.getOrDefault(e.getKey(), 0L)))
                .sum();
        return shortOf(factor, replicas, all, factor + " replicas of each key in all (" + factors + ")");
    }

    /** Why {@code replicas} distinct nodes cannot meet a level needing all or a quorum of {@code factor} replicas. */
    private static Optional<String> shortOf(int factor, long replicas, boolean all, String kept) {
        if (factor <= 0) {
            return Optional.empty();
        }
        int needed = all ? factor : factor / 2 + 1;
        return replicas >= needed
                ? Optional.empty()
                : Optional.of("it keeps " + kept + " and " + (all ? "all " : "a quorum of ") + needed + " must answer,"
                        + " but only " + replicas + " node" + (replicas == 1 ? "" : "s") + " can hold one");
    }

    /** A replication factor as {@code system_schema} stores it ({@code "3"}, or {@code "3/1"} with transient ones). */
    private static int factor(String value) {
        if (value == null) {
            return 0;
        }
        int slash = value.indexOf('/');
        try {
            return Integer.parseInt((slash < 0 ? value : value.substring(0, slash)).trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The replication to suggest: each factor capped at the nodes its data center (or the cluster) has. */
    private static String fix(Map<String, String> replication, Map<String, Long> nodes) {
        String strategy = replication.getOrDefault("class", "");
        if (strategy.endsWith("SimpleStrategy")) {
            long total = nodes.values().stream().mapToLong(Long::longValue).sum();
            return "{'class': 'SimpleStrategy', 'replication_factor': "
                    + Math.min(factor(replication.get("replication_factor")), total) + "}";
        }
        return replication.entrySet().stream()
                .filter(e -> !e.getKey().equals("class"))
                .map(e -> "'" + e.getKey() + "': " + Math.min(factor(e.getValue()), nodes.getOrDefault(e.getKey(), 0L)))
                .collect(Collectors.joining(", ", "{'class': 'NetworkTopologyStrategy', ", "}"));
    }

    /** The local data center: that of the nodes the driver does not ignore, if they are in one. */
    private static String localDatacenter(CqlSession session) {
        Set<String> local = session.getMetadata().getNodes().values().stream()
                .filter(n -> n.getDistance() == NodeDistance.LOCAL)
                .map(CassandraPlacement::datacenter)
                .collect(Collectors.toSet());
        return local.size() == 1 ? local.iterator().next() : null;
    }

    private static Map<String, Long> nodesPerDatacenter(CqlSession session) {
        return session.getMetadata().getNodes().values().stream()
                .collect(Collectors.groupingBy(CassandraPlacement::datacenter, TreeMap::new, Collectors.counting()));
    }

    private static String datacenter(Node node) {
        return node.getDatacenter() == null ? "(unknown)" : node.getDatacenter();
    }

    /** "data center 'dc1' (3 nodes)" or "data centers 'dc1' (3 nodes), 'dc2' (2 nodes)". */
    private static String describe(Map<String, Long> nodes) {
        return (nodes.size() == 1 ? "data center " : "data centers ")
                + nodes.entrySet().stream()
                        .map(e -> "'" + e.getKey() + "' (" + e.getValue() + " node" + (e.getValue() == 1 ? "" : "s")
                                + ")")
                        .collect(Collectors.joining(", "));
    }
}
