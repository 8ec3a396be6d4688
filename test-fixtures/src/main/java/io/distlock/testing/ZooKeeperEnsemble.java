package io.distlock.testing;

import io.distlock.kit.Deadlines;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.TestingZooKeeperServer;

/**
 * A ZooKeeper ensemble of 1 server (Curator's {@code TestingServer}) or 3 ({@code TestingCluster}) inside the test
 * JVM, each server's client port behind a {@link TcpProxy}, as a JUnit 5 extension: started before the test class,
 * faults undone after each test, stopped after the class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(3).build();
 *
 * @Test
 * void lock_survivesOneServerDown() {
 *     CuratorFramework client = CuratorFrameworkFactory.newClient(ZK.proxiedConnectString(), retry);
 *     ZK.server(0).kill9();
 *     ...
 * }
 * }</pre>
 *
 * <p>Servers come from {@value #CONNECT_VARIABLE} (a connect string of a running ensemble; no process faults then),
 * else they run in-process, which needs nothing installed. In-process servers run with {@code
 * -Dzookeeper.forceSync=no} (unless set otherwise), tick time 500 ms (sessions of 1 to 60 s) and data under {@code
 * target/distlock-fixtures}. They can be stopped, killed ({@code TestingZooKeeperServer.kill()}, the closest to
 * SIGKILL one JVM allows) and restarted on the same ports and data, but not paused: {@link ServerNode#pause()} throws
 * {@link UnsupportedOperationException}. Partitions via the proxies cut clients off from a server; traffic between
 * servers is not proxied.
 */
public final class ZooKeeperEnsemble extends StoreFixture {

    /** A connect string ({@code host:port,host:port}) of a running ensemble to use instead of starting one. */
    public static final String CONNECT_VARIABLE = "DISTLOCK_ZOOKEEPER_CONNECT";

    private static final int TICK_MILLIS = 500;
    /** The servers' {@code tickTime}. */
    public static final java.time.Duration TICK = java.time.Duration.ofMillis(TICK_MILLIS);

    private static final int MAX_SESSION_MILLIS = 60_000;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    private final int count;
    private final ServerLocator locator;
    private final TestPki tlsPki;
    private String connectString;
    private String secureConnectString;

    private ZooKeeperEnsemble(Builder builder) {
        this.count = builder.count;
        this.locator = builder.locator;
        this.tlsPki = builder.tlsPki;
    }

    /** A builder; one server by default. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The server at {@code index} (0-based); same as {@link #node(int)}.
     *
     * @throws IllegalStateException if not started
     */
    public ServerNode server(int index) {
        return node(index);
    }

    /**
     * The role server {@code index} reports through its {@code srvr} command: {@code leader}, {@code follower} or
     * {@code standalone}; empty while it does not serve (stopped, or in an election).
     *
     * @throws IllegalStateException if not started
     */
    public String mode(int index) {
        String answer = srvr(node(index).endpoint());
        return answer.lines()
                .filter(line -> line.startsWith("Mode:"))
                .map(line -> line.substring("Mode:".length()).strip())
                .findFirst()
                .orElse("");
    }

    /**
     * The index of a server in {@code mode} ({@code leader} or {@code follower}), waiting out an election in progress
     * (at most 30 s, scaled as the tests' timeouts are): until one ends, no server serves, so none reports a mode.
     *
     * @throws IllegalStateException if not started, or no server is in {@code mode} by then (the message gives every
     *     server's mode)
     */
    public int serverIn(String mode) {
        Objects.requireNonNull(mode, "mode");
        int[] found = {-1};
        Deadlines.await(
                () -> {
                    for (int i = 0; i < nodes().size(); i++) {
                        if (mode(i).equals(mode)) {
                            found[0] = i;
                            return true;
                        }
                    }
                    return false;
                },
                READY_TIMEOUT,
                () -> "no server is a " + mode + " (modes: "
                        + IntStream.range(0, nodes().size())
                                .mapToObj(i -> i + ": '" + mode(i) + "'")
                                .collect(Collectors.joining(", "))
                        + ")");
        return found[0];
    }

    /**
     * The connect string of the servers themselves, e.g. {@code 127.0.0.1:2181,127.0.0.1:2182}.
     *
     * @throws IllegalStateException if not started
     */
    public String connectString() {
        nodes(); // checks started
        return connectString;
    }

    /**
     * The connect string of the servers' TLS-only {@code secureClientPort}s, e.g. {@code 127.0.0.1:2281}.
     *
     * @throws IllegalStateException if not started, or started without {@link Builder#tls}
     */
    public String secureConnectString() {
        nodes(); // checks started
        if (secureConnectString == null) {
            throw new IllegalStateException("This ensemble has no secure client port: build it with tls(pki)");
        }
        return secureConnectString;
    }

    /**
     * The connect string of the servers' proxies, for clients a test partitions via {@link ServerNode#partition()}.
     *
     * @throws IllegalStateException if not started
     */
    public String proxiedConnectString() {
        return nodes().stream().map(ServerNode::proxiedEndpoint).collect(Collectors.joining(","));
    }

    @Override
    String describe() {
        return "ZooKeeper ensemble of " + count + " server" + (count == 1 ? "" : "s")
                + (tlsPki == null ? "" : " with a TLS port");
    }

    @Override
    void startNodes() {
        Optional<String> external = locator.variable(CONNECT_VARIABLE);
        if (tlsPki != null) {
            startTlsServer();
        } else if (external.isPresent()) {
            useExternal(external.get());
        } else if (count == 1) {
            startServer();
        } else {
            startCluster();
        }
    }

    private void useExternal(String connect) {
        List<String> hosts = new ArrayList<>();
        for (String part : connect.split(",")) {
            String hostPort = part.trim();
            int chroot = hostPort.indexOf('/');
            hosts.add(chroot >= 0 ? hostPort.substring(0, chroot) : hostPort);
        }
        if (hosts.size() < count) {
            throw new IllegalStateException(CONNECT_VARIABLE + " lists " + hosts.size() + " server(s) " + hosts
                    + " but this fixture needs " + count);
        }
        for (int i = 0; i < count; i++) {
            String name = "zk-" + (i + 1);
            String endpoint = hosts.get(i);
            Deadlines.await(
                    () -> accepts(endpoint),
                    READY_TIMEOUT,
                    () -> name + " at " + endpoint + " (from " + CONNECT_VARIABLE + ") accepts no connection");
            addExternalNode(name, endpoint, "server", CONNECT_VARIABLE);
        }
        connectString = connect;
    }

    private void startServer() {
        configureZooKeeper();
        InstanceSpec spec = spec(1);
        TestingServer server;
        try {
            server = track(new TestingServer(spec, true));
        } catch (Exception e) {
            throw new IllegalStateException("Cannot start an in-process ZooKeeper server: " + e, e);
        }
        String endpoint = Endpoints.loopback(spec.getPort());
        Runnable awaitServing = () -> awaitServing("zk-1", endpoint);
        awaitServing.run();
        ZooKeeperNode.Control control = new ZooKeeperNode.Control() {
            @Override
            public void stop() throws Exception {
                server.stop();
            }

            @Override
            public void kill() throws Exception {
                server.stop(); // TestingServer offers no kill
            }

            @Override
            public void restart() throws Exception {
                server.restart();
            }
        };
        addNode(new ZooKeeperNode("zk-1", spec, control, awaitServing, track(TcpProxy.start("zk-1", spec.getPort()))));
        connectString = endpoint;
    }

    private void startTlsServer() {
        configureZooKeeper();
        InstanceSpec spec = spec(1);
        int securePort = FreePorts.next();
        ZooKeeperTlsServer server = track(new ZooKeeperTlsServer(
                spec.getDataDirectory().toPath(), spec.getPort(), securePort, tlsPki, TICK_MILLIS, MAX_SESSION_MILLIS));
        String endpoint = Endpoints.loopback(spec.getPort());
        Runnable awaitServing = () -> awaitServing("zk-1", endpoint);
        try {
            server.restart();
        } catch (Exception e) {
            throw new IllegalStateException("Cannot start an in-process ZooKeeper server with TLS: " + e, e);
        }
        awaitServing.run();
        addNode(new ZooKeeperNode("zk-1", spec, server, awaitServing, track(TcpProxy.start("zk-1", spec.getPort()))));
        connectString = endpoint;
        secureConnectString = Endpoints.loopback(securePort);
    }

    private void startCluster() {
        configureZooKeeper();
        List<InstanceSpec> specs = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            specs.add(spec(i));
        }
        TestingCluster cluster = track(new TestingCluster(specs));
        try {
            cluster.start();
        } catch (Exception e) {
            throw new IllegalStateException("Cannot start an in-process ZooKeeper ensemble: " + e, e);
        }
        for (int i = 0; i < count; i++) {
            InstanceSpec spec = specs.get(i);
            String name = "zk-" + (i + 1);
            String endpoint = Endpoints.loopback(spec.getPort());
            Runnable awaitServing = () -> awaitServing(name, endpoint);
            ZooKeeperNode.Control control = new ZooKeeperNode.Control() {
                @Override
                public void stop() throws Exception {
                    serverOf(cluster, spec).stop();
                }

                @Override
                public void kill() throws Exception {
                    cluster.killServer(spec);
                }

                @Override
                public void restart() throws Exception {
                    cluster.restartServer(spec);
                }
            };
            addNode(new ZooKeeperNode(name, spec, control, awaitServing, track(TcpProxy.start(name, spec.getPort()))));
        }
        for (int i = 0; i < count; i++) {
            awaitServing("zk-" + (i + 1), Endpoints.loopback(specs.get(i).getPort()));
        }
        connectString = specs.stream().map(s -> Endpoints.loopback(s.getPort())).collect(Collectors.joining(","));
    }

    private static TestingZooKeeperServer serverOf(TestingCluster cluster, InstanceSpec spec) {
        return cluster.getServers().stream()
                .filter(s -> s.getInstanceSpec().equals(spec))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("No server for " + spec));
    }

    private static InstanceSpec spec(int serverId) {
        return new InstanceSpec(
                FixtureDirs.create("zk-" + serverId).toFile(),
                FreePorts.next(),
                FreePorts.next(),
                FreePorts.next(),
                false,
                serverId,
                TICK_MILLIS,
                -1,
                Map.of("maxSessionTimeout", Integer.toString(MAX_SESSION_MILLIS)),
                "127.0.0.1");
    }

    private static void configureZooKeeper() {
        if (System.getProperty("zookeeper.forceSync") == null) {
            System.setProperty("zookeeper.forceSync", "no");
        }
        // Curator writes configuration files to java.io.tmpdir; a build may point it at a directory not yet created.
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        try {
            Files.createDirectories(tmp);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create java.io.tmpdir " + tmp, e);
        }
    }

    /** Waits until the server answers the {@code srvr} command with its mode (standalone, leader or follower). */
    private static void awaitServing(String name, String endpoint) {
        Deadlines.await(
                () -> srvr(endpoint).contains("Mode:"), READY_TIMEOUT, () -> name + " at " + endpoint + " not serving");
    }

    private static String srvr(String endpoint) {
        try (Socket socket = new Socket()) {
            socket.connect(Endpoints.address(endpoint), (int) PROBE_TIMEOUT.toMillis());
            socket.setSoTimeout((int) PROBE_TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static boolean accepts(String endpoint) {
        try (Socket socket = new Socket()) {
            InetSocketAddress address = Endpoints.address(endpoint);
            socket.connect(address, (int) PROBE_TIMEOUT.toMillis());
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Builds a {@link ZooKeeperEnsemble}; nothing starts until the test class (or {@link #start()}). */
    public static final class Builder {
        private int count = 1;
        private ServerLocator locator = ServerLocator.system();
        private TestPki tlsPki;

        private Builder() {}

        /**
         * One server that also listens on a TLS-only {@code secureClientPort} ({@link #secureConnectString()}), with a
         * certificate for {@code localhost} and 127.0.0.1 from {@code pki}, asking clients for a certificate of {@code
         * pki} (mutual TLS; ZooKeeper 3.9.3's {@code ssl.clientAuth=none} closed certificate-less connections after
         * the handshake); always in-process (an external ensemble named by {@value #CONNECT_VARIABLE} is not used).
         * Clients log in with digest credentials as they like: the server takes any.
         */
        public Builder tls(TestPki pki) {
            this.tlsPki = Objects.requireNonNull(pki, "pki");
            return this;
        }

        /**
         * How many servers: 1 ({@code TestingServer}) or more ({@code TestingCluster}, usually 3); default 1.
         *
         * @throws IllegalArgumentException if {@code count < 1}
         */
        public Builder servers(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("servers must be at least 1, got " + count);
            }
            this.count = count;
            return this;
        }

        /** For tests of the fixture: where to look for servers. */
        Builder locator(ServerLocator locator) {
            this.locator = Objects.requireNonNull(locator, "locator");
            return this;
        }

        /** The fixture, not started. */
        public ZooKeeperEnsemble build() {
            if (tlsPki != null && count != 1) {
                throw new IllegalStateException("tls(...) starts one server; got servers(" + count + ")");
            }
            return new ZooKeeperEnsemble(this);
        }
    }
}
