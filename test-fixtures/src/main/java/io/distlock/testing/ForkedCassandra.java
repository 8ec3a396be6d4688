package io.distlock.testing;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Cassandra cluster of forked JVMs ({@code CassandraDaemon} from {@code cassandra-all}) on loopback: node {@code i}
 * (0-based) listens on {@code 127.0.0.(i+1)} and advertises {@code 127.0.1.(i+1)}, where its {@link TcpProxy}
 * listens, with the same native port. Loopback aliases need no set-up on Linux.
 */
final class ForkedCassandra implements CassandraServers {

    private static final Logger LOG = LoggerFactory.getLogger(ForkedCassandra.class);
    private static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(90);

    /** A read every replica must answer; system_distributed has RF 3, so on up to 3 nodes it needs every node. */
    private static final SimpleStatement ALL_REPLICAS_READ = SimpleStatement.newInstance(
                    "SELECT host_id FROM system_distributed.view_build_status"
                            + " WHERE keyspace_name = 'distlock' AND view_name = 'health'")
            .setConsistencyLevel(ConsistencyLevel.ALL);

    private static final SimpleStatement RELEASE_VERSION =
            SimpleStatement.newInstance("SELECT release_version FROM system.local");

    private final List<CassandraNode> nodes;

    private final CassandraSecurity security;

    private ForkedCassandra(List<CassandraNode> nodes, CassandraSecurity security) {
        this.nodes = List.copyOf(nodes);
        this.security = security;
        nodes.forEach(n -> n.attach(this));
    }

    /**
     * Starts {@code size} nodes at once and blocks until every node answers CQL and, with several nodes, every node
     * sees every other as up.
     *
     * @throws IllegalStateException if no JDK 11/17 or no server classpath is found, or the cluster is not healthy in
     *     time (the message includes the tail of the failing node's log); every started process is stopped then
     */
    static ForkedCassandra start(int size, String maxHeap) {
        return start(size, maxHeap, false);
    }

    /** As above; with {@code skewableClocks}, every node runs {@link CassandraServerClock}. */
    static ForkedCassandra start(int size, String maxHeap, boolean skewableClocks) {
        return start(size, maxHeap, skewableClocks, null);
    }

    /**
     * As above; with {@code security} (null for none), secured nodes (see {@link CassandraSecurity}). A secured node
     * listens on {@code 127.0.1.(i+1)} and advertises {@code 127.0.0.(i+1)}, where its proxy listens: clients dial an
     * address the test certificates name, so they can check the host name.
     */
    static ForkedCassandra start(int size, String maxHeap, boolean skewableClocks, CassandraSecurity security) {
        Path java = CassandraJdk.find().orElseThrow(() -> new IllegalStateException(CassandraJdk.missingMessage()));
        String classpath = CassandraServerClasspath.resolve();
        Path base = FixtureDirs.create("cassandra");
        List<String> listen = new ArrayList<>();
        List<String> advertised = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            String direct = "127.0.0." + (i + 1);
            String proxied = "127.0.1." + (i + 1);
            listen.add(security == null ? direct : proxied);
            advertised.add(security == null ? proxied : direct);
        }
        List<String> all = new ArrayList<>(listen);
        all.addAll(advertised);
        int nativePort = portFreeOn(all);
        int storagePort = portFreeOn(all);
        String clusterName = "distlock-" + base.getFileName();
        // Every node is a seed: a non-seed started with the others fails ("Unable to gossip with any peers") when the
        // seed is not gossiping yet, which on a loaded machine is common; a seed just goes on.
        String seeds = listen.stream().map(a -> a + ":" + storagePort).collect(Collectors.joining(","));

        List<CassandraNode> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                String name = "cassandra-node" + i;
                nodes.add(new CassandraNode(
                        new CassandraNodeConfig(
                                clusterName,
                                name,
                                listen.get(i),
                                advertised.get(i),
                                storagePort,
                                nativePort,
                                seeds,
                                base.resolve(name),
                                maxHeap,
                                security),
                        java,
                        classpath,
                        skewableClocks));
            }
            ForkedCassandra cluster = new ForkedCassandra(nodes, security);
            long started = System.nanoTime();
            cluster.startAll();
            cluster.awaitHealthy();
            LOG.info(
                    "Cassandra cluster of {} node(s) ready in {} ms: {}",
                    size,
                    (System.nanoTime() - started) / 1_000_000,
                    nodes);
            return cluster;
        } catch (RuntimeException | Error e) {
            nodes.forEach(ForkedCassandra::closeQuietly);
            throw e;
        }
    }

    @Override
    public List<InetSocketAddress> contactPoints() {
        return nodes.stream().map(CassandraNode::clientAddress).toList();
    }

    @Override
    public String localDatacenter() {
        return CassandraSessions.DEFAULT_DATACENTER;
    }

    @Override
    public int size() {
        return nodes.size();
    }

    /** Forked JVMs are local processes: every fault is available. */
    @Override
    public ServerSource source() {
        return ServerSource.LOCAL_BINARY;
    }

    @Override
    public CqlSession adminSession() {
        for (CassandraNode node : nodes) {
            if (node.isServing()) {
                return CassandraSessions.pinned(node.nativeAddress(), localDatacenter(), security);
            }
        }
        throw new IllegalStateException("No Cassandra node is running: " + nodes);
    }

    /** Moves node {@code i}'s wall clock {@code offset} away from the real one; see {@link CassandraServerClock}. */
    void setClockOffset(int i, Duration offset) {
        nodes.get(i).setClockOffset(offset);
    }

    @Override
    public ForkedCassandra forked() {
        return this;
    }

    /**
     * The node with index {@code i}.
     *
     * @throws IllegalArgumentException if there is no such node
     */
    CassandraNode node(int i) {
        if (i < 0 || i >= nodes.size()) {
            throw new IllegalArgumentException(
                    "No Cassandra node " + i + "; nodes are 0.." + (nodes.size() - 1) + " (" + nodes.size() + ")");
        }
        return nodes.get(i);
    }

    /** The nodes, in order. */
    List<CassandraNode> nodes() {
        return nodes;
    }

    /** Sets every skewable clock back to the real one. */
    void resetClocks() {
        for (CassandraNode node : nodes) {
            if (node.skewableClock()) {
                node.setClockOffset(Duration.ZERO);
            }
        }
    }

    /** {@link #awaitHealthy()} if every node is running and not paused; else nothing. */
    void awaitHealthyIfAllServing() {
        if (nodes.stream().allMatch(CassandraNode::isServing)) {
            awaitHealthy();
        }
    }

    /**
     * Blocks until every node answers CQL and, with several nodes, every node sees every other as up: a read at
     * consistency ALL coordinated by each node in turn succeeds.
     *
     * @throws IllegalStateException if a node is stopped or paused, or the cluster is not healthy in time
     */
    void awaitHealthy() {
        for (CassandraNode node : nodes) {
            if (!node.isServing()) {
                throw new IllegalStateException("Cannot become healthy: " + node.name() + " is "
                        + (node.process().isRunning() ? "paused" : "not running"));
            }
        }
        for (CassandraNode node : nodes) {
            node.process().awaitReady(() -> seesEveryReplica(node), HEALTH_TIMEOUT);
        }
    }

    /**
     * Blocks until every other serving node sees node {@code i} as down (its failure detector has convicted it): a read
     * at consistency ALL coordinated by each of them fails as unavailable rather than timing out.
     *
     * @throws IllegalStateException if node {@code i} is serving (running and not paused), or this does not happen in
     *     time
     */
    void awaitSeenDown(int i) {
        CassandraNode down = node(i);
        if (down.isServing()) {
            throw new IllegalStateException(down.name() + " is running; stop, kill or pause it first");
        }
        for (CassandraNode node : nodes) {
            if (node != down && node.isServing()) {
                node.process().awaitReady(() -> reportsUnavailable(node), HEALTH_TIMEOUT);
            }
        }
    }

    /** Kills every node (see {@link CassandraNode#close()}) and closes every proxy. */
    @Override
    public void close() {
        nodes.forEach(ForkedCassandra::closeQuietly);
    }

    @Override
    public String toString() {
        return "ForkedCassandra" + nodes;
    }

    /** Launches every node, then waits for each: members of a cluster start together. */
    private void startAll() {
        nodes.forEach(CassandraNode::launch);
        nodes.forEach(CassandraNode::awaitReady);
    }

    /** One attempt: node answers a read at consistency ALL it coordinates (on one node: any read). */
    private boolean seesEveryReplica(CassandraNode node) {
        return CassandraSessions.onPinned(node.nativeAddress(), localDatacenter(), security, session -> {
            session.execute(nodes.size() == 1 ? RELEASE_VERSION : ALL_REPLICAS_READ);
            return true;
        });
    }

    /** One attempt: whether a read at consistency ALL coordinated by {@code node} fails as unavailable. */
    private boolean reportsUnavailable(CassandraNode node) {
        return CassandraSessions.onPinned(node.nativeAddress(), localDatacenter(), security, session -> {
            try {
                session.execute(ALL_REPLICAS_READ);
                return false;
            } catch (UnavailableException e) {
                return true;
            } catch (AllNodesFailedException e) {
                // The retry policy moves an unavailable error on to the next node; a pinned session has none left.
                return e.getAllErrors().values().stream()
                        .flatMap(List::stream)
                        .anyMatch(UnavailableException.class::isInstance);
            }
        });
    }

    /** A port free on every given loopback address, so each node can use the same one on its own address. */
    private static int portFreeOn(List<String> addresses) {
        for (int attempt = 0; attempt < 50; attempt++) {
            int port = FreePorts.next();
            if (addresses.stream().allMatch(a -> bindable(a, port))) {
                return port;
            }
        }
        throw new IllegalStateException("No port free on all of " + addresses + " after 50 attempts");
    }

    private static boolean bindable(String address, int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(address), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void closeQuietly(CassandraNode node) {
        try {
            node.close();
        } catch (RuntimeException e) {
            LOG.warn("Cannot stop {}: {}", node, e.toString());
        }
    }
}
