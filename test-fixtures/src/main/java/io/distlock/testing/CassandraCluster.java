package io.distlock.testing;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.kit.TestTimeouts;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Cassandra cluster for a test class: a store fixture like the others (a JUnit 5 extension, registered as a
 * static field; outside JUnit {@link #start()} and {@link #close()}) that gives the class its own keyspace (replication
 * factor {@code min(3, nodes)}) on a cluster of 1 or 3 nodes.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final CassandraCluster CASSANDRA = CassandraCluster.builder().withNodes(3).dedicated().build();
 *
 * try (CqlSession session = CASSANDRA.newSession()) { ... }   // keyspace set, through the proxies
 * CASSANDRA.node(1).kill9();                                  // faults: dedicated forked clusters only
 * CASSANDRA.node(1).restart();                                // blocks until it has rejoined
 * }</pre>
 *
 * <p><b>Where the servers come from</b>, first that applies: the addresses in {@value #CONTACT_POINTS_ENV} (an
 * external cluster; data center {@value #LOCAL_DATACENTER_ENV}, default {@code datacenter1}); forked JVMs running
 * {@code CassandraDaemon} from {@code cassandra-all} on a JDK 11 or 17 (see {@code DISTLOCK_CASSANDRA_JAVA_HOME});
 * one Testcontainers node if no such JDK exists and a Docker engine answers; else the test fails saying which JDK to
 * install.
 *
 * <p><b>Modes.</b> {@link Builder#shared()} (the default) starts one cluster per JVM lazily, reuses it for every test
 * class that asks for the same size, and stops it when the test run ends; faults are refused. {@link
 * Builder#dedicated()} starts a cluster for the class and stops it after; faults are allowed. Outside JUnit there is no
 * run to share with: {@link #start()} starts a cluster for the fixture alone, which {@link #close()} stops.
 *
 * <p><b>Forked nodes</b>: node {@code i} (0-based) listens on {@code 127.0.0.(i+1)} and advertises {@code
 * 127.0.1.(i+1)} with the same port, where a {@link TcpProxy} forwards to it. Clients get the advertised addresses,
 * and the driver discovers the same addresses from {@code system.peers}, so every client connection, of any session,
 * goes through a proxy that {@link #node(int)} can drop or blackhole. Node-to-node traffic does not.
 *
 * <p>Methods block until their effect is complete and throw {@link IllegalStateException} when the cluster is not
 * started. Thread-safe.
 */
public final class CassandraCluster extends StoreFixture implements BeforeEachCallback {

    /** Environment variable with the contact points of an external cluster: {@code host[:port],host[:port]}. */
    public static final String CONTACT_POINTS_ENV = "DISTLOCK_CASSANDRA_CONTACT_POINTS";

    /** Environment variable naming the local data center of an external cluster (default {@code datacenter1}). */
    public static final String LOCAL_DATACENTER_ENV = "DISTLOCK_CASSANDRA_LOCAL_DC";

    /** The superuser of a {@link Builder#secured} cluster: Cassandra's default role. */
    public static final String SUPERUSER = "cassandra";

    /** The superuser's password on a {@link Builder#secured} cluster (a test value). */
    public static final String SUPERUSER_PASSWORD = "cassandra";

    private static final Logger LOG = LoggerFactory.getLogger(CassandraCluster.class);
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(CassandraCluster.class);
    private static final int MAX_KEYSPACE_NAME = 48;
    private static final Duration SCHEMA_CHANGE_TIMEOUT = Duration.ofSeconds(60);

    private final int count;
    private final boolean shared;
    private final String maxHeap;
    private final boolean skewableClocks;
    private final CassandraSecurity security;
    private final List<CqlSession> sessions = new CopyOnWriteArrayList<>();

    private volatile CassandraServers servers;
    private volatile String keyspace;
    private Class<?> testClass; // whose keyspace this is; null outside JUnit
    private ExtensionContext.Store run; // where a shared cluster lives for the JUnit run; null outside JUnit
    private int nestedDepth; // @Nested classes inherit the extension: they share the enclosing class's cluster

    private CassandraCluster(Builder b) {
        this.count = b.nodes;
        this.shared = b.shared;
        this.maxHeap = b.maxHeap;
        this.skewableClocks = b.skewableClocks;
        this.security = b.security;
    }

    /** A builder: 1 node, shared, 768 MB heap per node. */
    public static Builder builder() {
        return new Builder();
    }

    /** Starts or joins the cluster and creates the class's keyspace (a @Nested class shares its enclosing class's). Called by JUnit. */
    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (isStarted()) {
            // A @Nested class: the same cluster and keyspace as its enclosing class (not a second cluster).
            nestedDepth++;
            return;
        }
        testClass = context.getRequiredTestClass();
        run = context.getRoot().getStore(NAMESPACE);
        super.beforeAll(context);
    }

    /** Fails a test method early, with the fix, if the extension was registered on an instance field. */
    @Override
    public void beforeEach(ExtensionContext context) {
        if (!isStarted()) {
            throw new IllegalStateException(
                    "CassandraCluster was not started: register it on a static field (@RegisterExtension static)");
        }
    }

    /** Closes the sessions handed out; drops the keyspace (shared or external) or stops the cluster (dedicated). */
    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (nestedDepth > 0) {
            nestedDepth--;
            return;
        }
        super.afterAll(context);
    }

    @Override
    String describe() {
        return "Cassandra cluster of " + count + " node" + (count == 1 ? "" : "s") + " ("
                + (shared ? "shared" : "dedicated") + ")";
    }

    /**
     * Opens the servers (a shared cluster: the JUnit run's, started by the first class that asks; outside JUnit, one
     * for this fixture alone) and creates the keyspace. What {@link #close()} undoes, in reverse: the servers stopped
     * unless shared by the run, the keyspace dropped (shared or external), the sessions handed out closed.
     */
    @Override
    void startNodes() {
        boolean ownServers = !shared || run == null;
        CassandraServers opened;
        if (!ownServers) {
            String key = "shared-cassandra-" + count + "-" + maxHeap;
            opened = run.getOrComputeIfAbsent(key, k -> open(count, maxHeap, false), CassandraServers.class);
        } else if (security != null) {
            opened = openSecured(count, maxHeap);
        } else {
            opened = open(count, maxHeap, !shared && skewableClocks);
        }
        servers = opened;
        track((AutoCloseable) () -> {
            servers = null;
            if (ownServers) {
                opened.close();
            }
        });
        if (!shared && opened instanceof ForkedCassandra forked) {
            forked.nodes().forEach(this::addNode);
        }
        keyspace = keyspaceName(testClass);
        int replicationFactor = replicationFactor(opened);
        try (CqlSession admin = opened.adminSession()) {
            // A schema change waits for every node to agree: on three nodes of a loaded machine longer than a probe.
            admin.execute(SimpleStatement.newInstance("CREATE KEYSPACE " + keyspace + " WITH replication = {'class':"
                            + " 'SimpleStrategy', 'replication_factor': " + replicationFactor + "}")
                    .setTimeout(TestTimeouts.scaled(SCHEMA_CHANGE_TIMEOUT)));
        }
        if (shared || opened instanceof ExternalCassandra) {
            String dropped = keyspace;
            track((AutoCloseable) () -> dropKeyspace(opened, dropped));
        }
        track((AutoCloseable) () -> {
            sessions.forEach(CqlSession::close);
            sessions.clear();
        });
        LOG.info("Keyspace {} (RF {}) on {}", keyspace, replicationFactor, opened);
    }

    private static void dropKeyspace(CassandraServers servers, String keyspace) {
        try (CqlSession admin = servers.adminSession()) {
            admin.execute("DROP KEYSPACE IF EXISTS " + keyspace);
        } catch (RuntimeException e) {
            LOG.warn("Cannot drop keyspace {}: {}", keyspace, e.toString());
        }
    }

    /** The number of nodes. */
    public int size() {
        return servers().size();
    }

    /** The addresses clients connect to (for forked nodes: the proxies), one per node. */
    public List<InetSocketAddress> contactPoints() {
        return servers().contactPoints();
    }

    /** {@link #contactPoints()} as {@code host:port,host:port}, for URIs and configuration. */
    public String contactPointsString() {
        return contactPoints().stream()
                .map(a -> a.getHostString() + ":" + a.getPort())
                .collect(Collectors.joining(","));
    }

    /** The data center clients must name as local. */
    public String localDatacenter() {
        return servers().localDatacenter();
    }

    /** This test class's keyspace: created empty before the class, dropped after it. */
    public String keyspace() {
        servers();
        return keyspace;
    }

    /** The keyspace's replication factor: {@code min(3, size())}. */
    public int replicationFactor() {
        return replicationFactor(servers());
    }

    private static int replicationFactor(CassandraServers servers) {
        return Math.min(3, servers.size());
    }

    /**
     * A new driver session over {@link #contactPoints()} with {@link #keyspace()} set (request timeout 12 s, scaled,
     * longer than the forked servers' own timeouts).
     * Blocks until connected. The fixture closes it after the class; closing it earlier is fine.
     */
    public CqlSession newSession() {
        CqlSession session = CassandraSessions.client(contactPoints(), localDatacenter(), keyspace(), security);
        sessions.add(session);
        return session;
    }

    /**
     * Node {@code i} (0-based), for faults: {@link ServerNode#stop()}, {@link ServerNode#kill9()}, {@link
     * ServerNode#restart()} (blocks until the cluster sees it up again), {@link ServerNode#pause()}/{@link
     * ServerNode#resume()}, and through its proxy {@link ServerNode#disconnect()} (drop), {@link ServerNode#partition()}
     * (blackhole) and {@link ServerNode#heal()}. Its {@link ServerNode#endpoint()} is the direct address, its {@link
     * ServerNode#proxiedEndpoint()} the one clients get. Faults are undone after each test (see {@link #resetFaults()}).
     *
     * @throws UnsupportedOperationException in shared mode, or when the servers are not forked by this fixture
     * @throws IndexOutOfBoundsException if there is no node {@code i}
     */
    @Override
    public ServerNode node(int i) {
        faultable();
        return super.node(i);
    }

    /** Every node, in order; see {@link #node(int)}. Same exceptions. */
    @Override
    public List<ServerNode> nodes() {
        faultable();
        return super.nodes();
    }

    /**
     * Where the servers come from: {@link ServerSource#LOCAL_BINARY} (forked JVMs), {@link ServerSource#ENVIRONMENT}
     * ({@value #CONTACT_POINTS_ENV}) or {@link ServerSource#CONTAINER}.
     *
     * @throws IllegalStateException if the fixture is not started
     */
    @Override
    public ServerSource source() {
        return servers().source();
    }

    /**
     * Of a dedicated forked cluster: sets every clock back, heals every proxy, resumes paused nodes, starts stopped or
     * killed ones (together), and blocks until every node sees every other up. Nothing on a shared cluster, where
     * faults are refused.
     *
     * @throws IllegalStateException if the cluster is not healthy in time
     */
    @Override
    void undoFaults() {
        if (!shared && servers instanceof ForkedCassandra forked) {
            forked.resetClocks();
            super.undoFaults();
            forked.awaitHealthy();
        }
    }

    /**
     * The read timeout of the nodes this fixture forks ({@code read_request_timeout}): how long a coordinator waits
     * for a replica that does not answer (a dead one it still counts as up) before it fails the read.
     */
    public static Duration serverReadTimeout() {
        return Duration.ofMillis(CassandraNodeConfig.SERVER_READ_TIMEOUT_MILLIS);
    }

    /**
     * Blocks until every other running node sees node {@code i} (stopped, killed or paused) as down. Right after a
     * SIGKILL or SIGSTOP the others still count the node as up until their failure detector convicts it (seconds, up
     * to tens of seconds on a loaded machine); requests meanwhile may wait for it and time out, lightweight
     * transactions especially. Call this to test the degraded cluster rather than that window.
     *
     * @throws IllegalStateException if node {@code i} is serving, or this does not happen in time (scaled 90 s)
     * @throws UnsupportedOperationException in shared mode or when the servers are not forked by this fixture
     */
    public void awaitSeenDown(int i) {
        faultable().awaitSeenDown(i);
    }

    /**
     * Moves node {@code i}'s wall clock (the one its TTLs and expiries read) {@code offset} ahead of the real one
     * (behind, if negative); undone after each test. The node's monotonic time is untouched.
     *
     * @throws UnsupportedOperationException in shared mode, when the servers are not forked by this fixture, or when
     *     the cluster was not built {@link Builder#withSkewableClocks()}
     */
    public void setClockOffset(int i, java.time.Duration offset) {
        faultable().setClockOffset(i, offset);
    }

    /**
     * Blocks until every node answers CQL and sees every other node as up (a read at consistency ALL coordinated by
     * each node succeeds).
     *
     * @throws IllegalStateException if a node is stopped or paused, or this does not happen in time
     * @throws UnsupportedOperationException when the servers are not forked by this fixture
     */
    public void awaitHealthy() {
        servers().forked().awaitHealthy();
    }

    @Override
    public String toString() {
        CassandraServers current = servers;
        return "CassandraCluster[" + count + " node(s), " + (shared ? "shared" : "dedicated") + ", "
                + (current == null ? "not started" : current + ", keyspace " + keyspace) + "]";
    }

    private CassandraServers servers() {
        CassandraServers current = servers;
        if (current == null) {
            throw notStarted();
        }
        return current;
    }

    private ForkedCassandra faultable() {
        if (shared) {
            throw new UnsupportedOperationException("Fault controls are refused on a shared cluster (other test"
                    + " classes use it); build the extension with CassandraCluster.builder().dedicated()");
        }
        return servers().forked();
    }

    /** Secured servers are always forked: an external cluster or a container would have security of its own. */
    private CassandraServers openSecured(int nodes, String maxHeap) {
        return ForkedCassandra.start(nodes, maxHeap, false, security);
    }

    /** Picks where the servers come from; see the class comment. */
    static CassandraServers open(int nodes, String maxHeap, boolean skewableClocks) {
        String external = System.getenv(CONTACT_POINTS_ENV);
        if (external != null && !external.isBlank()) {
            String dc = System.getenv(LOCAL_DATACENTER_ENV);
            ExternalCassandra servers = ExternalCassandra.connect(
                    external, dc == null || dc.isBlank() ? CassandraSessions.DEFAULT_DATACENTER : dc.trim());
            LOG.info("Using the Cassandra cluster at {}={} ({} nodes)", CONTACT_POINTS_ENV, external, servers.size());
            return servers;
        }
        if (CassandraJdk.find().isPresent()) {
            return ForkedCassandra.start(nodes, maxHeap, skewableClocks);
        }
        if (nodes == 1 && Containers.dockerAvailable()) {
            LOG.info("No JDK 11/17 to fork Cassandra; starting {} with Testcontainers", ContainerCassandra.IMAGE);
            return ContainerCassandra.start(maxHeap);
        }
        throw new IllegalStateException(CassandraJdk.missingMessage() + ". No fall-back either: "
                + (nodes == 1
                        ? "no Docker engine answers for Testcontainers"
                        : "Testcontainers provides 1 node only and " + nodes + " were asked for")
                + ", and " + CONTACT_POINTS_ENV + " is not set.");
    }

    /** {@code <class>_<random>} ({@code distlock_<random>} outside JUnit), lower case, within Cassandra's 48 characters. */
    private static String keyspaceName(Class<?> testClass) {
        String suffix = "_" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
        String base = (testClass == null ? "distlock" : testClass.getSimpleName())
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^a-z0-9_]", "_");
        if (base.isEmpty() || !Character.isLetter(base.charAt(0))) {
            base = "ks_" + base;
        }
        return base.substring(0, Math.min(base.length(), MAX_KEYSPACE_NAME - suffix.length())) + suffix;
    }

    /** Builds a {@link CassandraCluster}. */
    public static final class Builder {
        private int nodes = 1;
        private boolean shared = true;
        private String maxHeap = "768M";
        private boolean skewableClocks;
        private CassandraSecurity security;

        private Builder() {}

        /**
         * The number of nodes: 1, or 3 on 127.0.0.1-3 with the keyspace at RF 3 (about 1.3 GB of memory per node).
         *
         * @throws IllegalArgumentException unless 1 or 3
         */
        public Builder withNodes(int nodes) {
            if (nodes != 1 && nodes != 3) {
                throw new IllegalArgumentException("A CassandraCluster has 1 or 3 nodes, not " + nodes);
            }
            this.nodes = nodes;
            return this;
        }

        /** One cluster per JVM and size, shared by every test class that asks for it; no fault controls (default). */
        public Builder shared() {
            this.shared = true;
            return this;
        }

        /** A cluster for this test class alone, stopped after it; fault controls allowed. */
        public Builder dedicated() {
            this.shared = false;
            return this;
        }

        /**
         * The maximum heap of each forked node, as for {@code -Xmx} (default {@code 768M}).
         *
         * @throws IllegalArgumentException if it is not a number followed by M or G
         */
        public Builder withMaxHeap(String maxHeap) {
            Objects.requireNonNull(maxHeap, "maxHeap");
            if (!maxHeap.matches("[0-9]+[MmGg]")) {
                throw new IllegalArgumentException("maxHeap must look like 768M or 1G, got '" + maxHeap + "'");
            }
            this.maxHeap = maxHeap;
            return this;
        }

        /**
         * Forked nodes run a clock that {@link #setClockOffset} moves (dedicated clusters only), for tests of clock
         * skew between the nodes.
         */
        public Builder withSkewableClocks() {
            this.skewableClocks = true;
            return this;
        }

        /**
         * Forked nodes with security on: logins by {@code PasswordAuthenticator} (superuser {@value #SUPERUSER},
         * password {@value #SUPERUSER_PASSWORD}), grants by {@code CassandraAuthorizer}, and the native port on TLS
         * only, with a server certificate from {@code pki} (valid for {@code 127.0.0.1}-{@code 3}, the addresses
         * clients get) and a client certificate signed by {@code pki} required. {@link #newSession()} logs in as the
         * superuser. Implies {@link #dedicated()}; never an external cluster or a container.
         */
        public Builder secured(TestPki pki) {
            this.security = CassandraSecurity.from(Objects.requireNonNull(pki, "pki"));
            this.shared = false;
            return this;
        }

        /** The extension; nothing starts before JUnit calls it. */
        public CassandraCluster build() {
            return new CassandraCluster(this);
        }
    }
}
