package io.distlock.testing;

import io.distlock.kit.Deadlines;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * N independent Redis masters for tests (1 for the single-instance backend, 5 for Redlock), each behind a {@link
 * TcpProxy}, as a JUnit 5 extension: started before the test class, faults undone after each test, stopped after the
 * class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServers REDIS = RedisServers.builder().servers(5).build();
 *
 * @Test
 * void lock_survivesOneServerDown() {
 *     RemoteLocker locker = RemoteLockers.open("redlock://" + String.join(",", REDIS.proxiedEndpoints()));
 *     REDIS.node(0).kill9();
 *     ...
 * }
 * }</pre>
 *
 * <p>Servers come from, in order: {@value #ADDRESSES_VARIABLE} (comma-separated {@code host:port}, at least N; no
 * process faults then), the {@code redis-server} binary ({@value #BINARY_VARIABLE}, {@code PATH}, {@code /usr/bin},
 * {@code /usr/local/bin}), a {@code redis} container when a Docker engine answers. Otherwise {@link #start()} fails
 * with the install command ({@value #INSTALL_COMMAND}). A local server runs as {@code redis-server --port P --bind
 * 127.0.0.1 --save "" --appendonly no --daemonize no} on a free port: no persistence, so a restarted or killed server
 * comes back empty.
 *
 * <p>Secured servers ({@link Builder#tls}, {@link Builder#aclUser}; local binary only) speak TLS only, with
 * certificates of the test run's {@link TestPki}, and know only the ACL users given plus the fixture's admin user:
 *
 * <pre>{@code
 * static final TestPki PKI = TestPki.create(Path.of("target", "pki"));
 * @RegisterExtension
 * static final RedisServers REDIS = RedisServers.builder()
 *         .tls(PKI)
 *         .aclUser("locker", "s3cret", "~distlock:*", "&distlock:released", "+set", "+eval", "+evalsha")
 *         .build();
 * }</pre>
 *
 * <p>With {@link Builder#sentinel}, the first server is a master, the others its replicas, and a Redis Sentinel
 * watches them ({@link #sentinelEndpoint()}), as a managed Redis with automatic failover runs.
 */
public final class RedisServers extends StoreFixture {

    /** Comma-separated {@code host:port} of running servers to use instead of starting any. */
    public static final String ADDRESSES_VARIABLE = "DISTLOCK_REDIS_ADDRESSES";

    /** Path of the {@code redis-server} binary to run, instead of searching for it. */
    public static final String BINARY_VARIABLE = "DISTLOCK_REDIS_SERVER_BINARY";

    /** How to install the server on Debian/Ubuntu. */
    public static final String INSTALL_COMMAND = "apt-get install -y redis-server";

    static final String IMAGE = "redis:7.2";
    private static final int CONTAINER_PORT = 6379;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);

    /** The ACL user the fixture adds for itself and for tests' probes when ACL users are configured. */
    public static final String ADMIN_USER = "fixture-admin";

    private final int count;
    private final ServerLocator locator;
    private final Optional<TestPki> pki;
    private final boolean clientCertificates;
    private final List<List<String>> users;
    private final boolean clusterNodes;
    private final Optional<String> sentinelMaster;
    private final Optional<String> sentinelPassword;
    private volatile String sentinelEndpoint;
    private final String adminPassword = "admin-" + UUID.randomUUID();

    private RedisServers(Builder builder) {
        this.count = builder.count;
        this.locator = builder.locator;
        this.pki = builder.pki;
        this.clientCertificates = builder.clientCertificates;
        this.users = List.copyOf(builder.users);
        this.clusterNodes = builder.clusterNodes;
        this.sentinelMaster = builder.sentinelMaster;
        this.sentinelPassword = builder.sentinelPassword;
    }

    /** A builder; one server by default. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@code host:port} of each server, for clients that connect directly.
     *
     * @throws IllegalStateException if not started
     */
    public List<String> endpoints() {
        return nodes().stream().map(ServerNode::endpoint).collect(Collectors.toUnmodifiableList());
    }

    /**
     * {@code host:port} of each server's proxy, for clients a test partitions via {@link ServerNode#partition()}.
     *
     * @throws IllegalStateException if not started
     */
    public List<String> proxiedEndpoints() {
        return nodes().stream().map(ServerNode::proxiedEndpoint).collect(Collectors.toUnmodifiableList());
    }

    /**
     * The password of {@value #ADMIN_USER} (all commands, all keys), when ACL users are configured: for tests that
     * look into the store beside the locker under test.
     *
     * @throws IllegalStateException if no ACL user is configured (the default user then needs no password)
     */
    public String adminPassword() {
        if (users.isEmpty()) {
            throw new IllegalStateException("No ACL users configured: the default user needs no password");
        }
        return adminPassword;
    }

    /**
     * {@code host:port} of the Redis Sentinel that watches the servers (started with {@link Builder#sentinel}).
     *
     * @throws IllegalStateException if not started, or started without a sentinel
     */
    public String sentinelEndpoint() {
        requireStarted();
        if (sentinelMaster.isEmpty()) {
            throw new IllegalStateException("Started without a sentinel: use RedisServers.builder().sentinel(name)");
        }
        return sentinelEndpoint;
    }

    /**
     * The server the sentinel names as the master now, as {@code host:port} (the {@code address} of the master's line
     * in its {@code INFO sentinel}).
     *
     * @throws IllegalStateException if started without a sentinel, or the sentinel does not name the master
     * @throws UncheckedIOException if the sentinel does not answer
     */
    public String sentinelMasterEndpoint() {
        String sentinel = sentinelEndpoint();
        String info;
        try {
            info = Resp.command(sentinel, READY_TIMEOUT, sentinelPassword, "INFO", "sentinel");
        } catch (IOException e) {
            throw new UncheckedIOException("The sentinel at " + sentinel + " did not answer", e);
        }
        String line = "name=" + sentinelMaster.get() + ",";
        for (String l : info.split("\r?\n")) {
            int at = l.indexOf(line);
            int address = l.indexOf(",address=");
            if (at >= 0 && address > at) {
                int end = l.indexOf(',', address + 1);
                return l.substring(address + ",address=".length(), end < 0 ? l.length() : end);
            }
        }
        throw new IllegalStateException(
                "The sentinel at " + sentinel + " names no master '" + sentinelMaster.get() + "': " + info);
    }

    /** Whether the servers speak TLS only (started with {@link Builder#tls}). */
    public boolean tls() {
        return pki.isPresent();
    }

    @Override
    String describe() {
        return count + " Redis server" + (count == 1 ? "" : "s");
    }

    @Override
    void startNodes() {
        ServerLocator.Choice choice = locator.locate(new ServerLocator.Wanted(
                "Redis", ADDRESSES_VARIABLE, BINARY_VARIABLE, "redis-server", INSTALL_COMMAND));
        if ((pki.isPresent() || !users.isEmpty() || clusterNodes || sentinelMaster.isPresent())
                && choice.source != ServerSource.LOCAL_BINARY) {
            throw new IllegalStateException(
                    "Redis servers with TLS, ACL users, cluster mode or a sentinel are started only from a local"
                            + " redis-server binary (Debian's is built with TLS), not from " + choice.source
                            + "; install it with " + INSTALL_COMMAND);
        }
        if (sentinelMaster.isPresent() && (pki.isPresent() || !users.isEmpty() || clusterNodes)) {
            throw new IllegalStateException(
                    "A sentinel is started with plaintext servers only, without ACL users or cluster mode");
        }
        switch (choice.source) {
            case ENVIRONMENT:
                useExternal(choice.addresses);
                break;
            case LOCAL_BINARY:
                startProcesses(choice.binary);
                break;
            case CONTAINER:
                startContainers();
                break;
            default:
                throw new IllegalStateException("Unexpected server source " + choice.source);
        }
    }

    private void useExternal(List<String> addresses) {
        if (addresses.size() < count) {
            throw new IllegalStateException(ADDRESSES_VARIABLE + " lists " + addresses.size() + " server(s) "
                    + addresses + " but this fixture needs " + count + " independent Redis servers");
        }
        for (int i = 0; i < count; i++) {
            String endpoint = addresses.get(i);
            String name = "redis-" + (i + 1);
            awaitPing(name, endpoint, ADDRESSES_VARIABLE);
            addExternalNode(name, endpoint, "server", ADDRESSES_VARIABLE);
        }
    }

    private void startProcesses(Path binary) {
        Optional<SSLSocketFactory> tlsProbe = pki.map(RedisServers::probeSockets);
        // One certificate for all: issuing rewrites the same files, which a server starting meanwhile would read.
        Optional<TestPki.Identity> certificate = pki.map(p -> p.server("redis"));
        List<ProcessNode> started = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String name = "redis-" + i;
            int port = FreePorts.next();
            String endpoint = Endpoints.loopback(port);
            Path dir = FixtureDirs.create(name);
            ServerProcess process = track(ServerProcess.builder(name, command(binary, port, dir, certificate))
                    .logFile(dir.resolve(name + ".log"))
                    .build());
            TcpProxy proxy = track(TcpProxy.start(name, port));
            ServerProcess.ReadinessProbe ready = tlsProbe.<ServerProcess.ReadinessProbe>map(
                            f -> () -> Resp.answersOverTls(endpoint, PROBE_TIMEOUT, f))
                    .orElse(() -> Resp.ping(endpoint, PROBE_TIMEOUT));
            ProcessNode node = new ProcessNode(endpoint, process, ready, READY_TIMEOUT, proxy);
            node.launch();
            started.add(node);
            addNode(node);
        }
        started.forEach(ProcessNode::awaitReady);
        if (sentinelMaster.isPresent()) {
            startSentinel(binary, started);
        }
    }

    /**
     * Makes the other servers replicas of the first and starts a sentinel watching it under the master's name, with
     * a quorum of one: it fails over one second after the master stops answering. Returns once the sentinel knows
     * every replica (it learns them from the master's {@code INFO}), so that a failover has a replica to promote.
     */
    private void startSentinel(Path binary, List<ProcessNode> servers) {
        String master = servers.get(0).endpoint();
        String[] hostPort = master.split(":");
        for (ProcessNode replica : servers.subList(1, servers.size())) {
            try {
                Resp.command(replica.endpoint(), READY_TIMEOUT, "REPLICAOF", hostPort[0], hostPort[1]);
            } catch (IOException e) {
                throw new UncheckedIOException("Could not make " + replica.name() + " a replica of " + master, e);
            }
        }
        String name = sentinelMaster.get();
        int port = FreePorts.next();
        String endpoint = Endpoints.loopback(port);
        Path dir = FixtureDirs.create("redis-sentinel");
        Path config = dir.resolve("sentinel.conf");
        try {
            // The sentinel rewrites its configuration file as it learns replicas and fails over.
            Files.writeString(
                    config,
                    String.join(
                            "\n",
                            "port " + port,
                            "bind 127.0.0.1",
                            "dir " + dir,
                            "sentinel monitor " + name + " " + hostPort[0] + " " + hostPort[1] + " 1",
                            "sentinel down-after-milliseconds " + name + " 1000",
                            "sentinel failover-timeout " + name + " 10000",
                            sentinelPassword.map(p -> "requirepass " + p).orElse(""),
                            ""));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not write the sentinel's configuration " + config, e);
        }
        ServerProcess sentinel = track(
                ServerProcess.builder("redis-sentinel", List.of(binary.toString(), config.toString(), "--sentinel"))
                        .logFile(dir.resolve("redis-sentinel.log"))
                        .build());
        sentinel.start();
        int replicas = servers.size() - 1;
        Deadlines.await(
                () -> {
                    try {
                        String info = Resp.command(endpoint, PROBE_TIMEOUT, sentinelPassword, "INFO", "sentinel");
                        return info != null && info.contains("status=ok") && info.contains("slaves=" + replicas);
                    } catch (IOException | IllegalStateException notYet) {
                        return false;
                    }
                },
                READY_TIMEOUT,
                () -> "the sentinel at " + endpoint + " did not come to know " + name + " and its " + replicas
                        + " replica(s); its log:\n" + sentinel.logTail(30));
        sentinelEndpoint = endpoint;
    }

    /**
     * {@code redis-server} on {@code port}: plaintext, or TLS only ({@code --port 0 --tls-port}) with the PKI's
     * server certificate; with ACL users, the default user off and the fixture's admin user on.
     */
    private List<String> command(Path binary, int port, Path dir, Optional<TestPki.Identity> certificate) {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if (certificate.isPresent()) {
            TestPki.Identity server = certificate.get();
            command.addAll(List.of(
                    "--port",
                    "0",
                    "--tls-port",
                    Integer.toString(port),
                    "--tls-cert-file",
                    server.certFile().toAbsolutePath().toString(),
                    "--tls-key-file",
                    server.keyFile().toAbsolutePath().toString(),
                    "--tls-ca-cert-file",
                    pki.get().caFile().toAbsolutePath().toString(),
                    "--tls-auth-clients",
                    clientCertificates ? "yes" : "optional"));
        } else {
            command.addAll(List.of("--port", Integer.toString(port)));
        }
        command.addAll(List.of(
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                dir.toString()));
        if (clusterNodes) {
            command.addAll(List.of(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    dir.resolve("nodes.conf").toString()));
        }
        if (!users.isEmpty()) {
            command.addAll(List.of("--user", "default", "off"));
            command.addAll(List.of("--user", ADMIN_USER, "on", ">" + adminPassword, "~*", "&*", "+@all"));
            for (List<String> user : users) {
                command.add("--user");
                command.addAll(user);
            }
        }
        return command;
    }

    /** TLS sockets for the readiness probe: trusting the PKI's authority, with a client certificate of its own. */
    private static SSLSocketFactory probeSockets(TestPki pki) {
        try {
            TestPki.Identity probe = pki.client("fixture-probe");
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(probe.keyStore())) {
                keys.load(in, probe.keyStorePassword().toCharArray());
            }
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(keys, probe.keyStorePassword().toCharArray());
            KeyStore trusted = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(pki.trustStore())) {
                trusted.load(in, "changeit".toCharArray());
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trusted);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trust.getTrustManagers(), null);
            return context.getSocketFactory();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Cannot make the TLS readiness probe of the Redis fixture", e);
        }
    }

    private void startContainers() {
        for (int i = 1; i <= count; i++) {
            String name = "redis-" + i;
            Containers.Running container = track(Containers.start(
                    IMAGE,
                    CONTAINER_PORT,
                    List.of("redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no")));
            String endpoint = container.endpoint();
            awaitPing(name, endpoint, "container " + IMAGE);
            addUnmanagedNode(
                    name,
                    endpoint,
                    ServerSource.CONTAINER,
                    "the server runs in a container (no local redis-server; install it with " + INSTALL_COMMAND
                            + " for process faults)");
        }
    }

    private static void awaitPing(String name, String endpoint, String origin) {
        Deadlines.await(
                () -> Resp.ping(endpoint, PROBE_TIMEOUT),
                READY_TIMEOUT,
                () -> name + " at " + endpoint + " (from " + origin + ") does not answer PING");
    }

    /** Builds a {@link RedisServers}; nothing starts until the test class (or {@link RedisServers#start()}). */
    public static final class Builder {
        private int count = 1;
        private ServerLocator locator = ServerLocator.system();
        private Optional<TestPki> pki = Optional.empty();
        private boolean clientCertificates;
        private final List<List<String>> users = new ArrayList<>();
        private boolean clusterNodes;
        private Optional<String> sentinelMaster = Optional.empty();
        private Optional<String> sentinelPassword = Optional.empty();

        private Builder() {}

        /**
         * Each server a node of a Redis Cluster ({@code --cluster-enabled yes}), alone and serving no hash slot until a
         * test assigns slots and introduces the nodes to each other ({@code CLUSTER ADDSLOTSRANGE}, {@code CLUSTER
         * MEET}). From a local {@code redis-server} only.
         */
        public Builder clusterNodes() {
            this.clusterNodes = true;
            return this;
        }

        /**
         * TLS only: {@code --port 0 --tls-port P} with a server certificate of {@code pki} (valid for localhost and
         * 127.0.0.1), trusting {@code pki}'s authority for client certificates, which are optional unless {@link
         * #requireClientCertificates()}.
         */
        public Builder tls(TestPki pki) {
            this.pki = Optional.of(Objects.requireNonNull(pki, "pki"));
            return this;
        }

        /** With {@link #tls}: {@code --tls-auth-clients yes}, a client without a certificate of the PKI is refused. */
        public Builder requireClientCertificates() {
            this.clientCertificates = true;
            return this;
        }

        /**
         * An ACL user, {@code user <name> on ><password> <rules...>} (e.g. {@code "~distlock:*", "&distlock:*",
         * "+set"}). With any user configured the default user is off (a client without credentials gets {@code
         * NOAUTH}) and the fixture adds {@value RedisServers#ADMIN_USER} (see {@link RedisServers#adminPassword()}).
         */
        public Builder aclUser(String name, String password, String... rules) {
            List<String> user = new ArrayList<>(List.of(name, "on", ">" + password));
            user.addAll(List.of(rules));
            users.add(user);
            return this;
        }

        /**
         * How many independent servers (masters, no replication between them); default 1.
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

        /**
         * The first server a master, the others its replicas ({@code REPLICAOF}), and one Redis Sentinel watching them
         * under {@code masterName} with a quorum of one, failing over one second after the master stops answering (its
         * {@code down-after-milliseconds}). Plaintext servers from a local {@code redis-server} only.
         *
         * @throws NullPointerException if {@code masterName} is null
         */
        public Builder sentinel(String masterName) {
            this.sentinelMaster = Optional.of(Objects.requireNonNull(masterName, "masterName"));
            return this;
        }

        /**
         * With {@link #sentinel}: the sentinel asks its clients for {@code password} ({@code requirepass}); the
         * servers do not.
         *
         * @throws NullPointerException if {@code password} is null
         */
        public Builder sentinelPassword(String password) {
            this.sentinelPassword = Optional.of(Objects.requireNonNull(password, "password"));
            return this;
        }

        /** For tests of the fixture: where to look for servers. */
        Builder locator(ServerLocator locator) {
            this.locator = Objects.requireNonNull(locator, "locator");
            return this;
        }

        /** The fixture, not started. */
        public RedisServers build() {
            return new RedisServers(this);
        }
    }
}
