package io.distlock.testing;

import io.distlock.kit.Deadlines;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * An etcd cluster of 1 or 3 members for tests, each member's client port behind a {@link TcpProxy}, as a JUnit 5
 * extension (modelled on jetcd's {@code EtcdClusterExtension}): started before the test class, faults undone after
 * each test, stopped after the class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();
 *
 * @Test
 * void lock_survivesLeaderLoss() {
 *     Client client = Client.builder().endpoints(ETCD.proxiedClientEndpoints().toArray(String[]::new)).build();
 *     ETCD.member(0).kill9();
 *     ...
 * }
 * }</pre>
 *
 * <p>Members come from, in order: {@value #ENDPOINTS_VARIABLE} (comma-separated client URLs or {@code host:port} of
 * a running cluster; no process faults then), the {@code etcd} binary ({@value #BINARY_VARIABLE}, {@code PATH}, {@code
 * /usr/bin}, {@code /usr/local/bin}), a single-member container when a Docker engine answers. Otherwise {@link
 * #start()} fails with the install command ({@value #INSTALL_COMMAND}). Local members listen on free loopback ports
 * with their data under {@code target/distlock-fixtures} (set {@code -Ddistlock.fixtures.dir=/dev/shm/distlock} for
 * tmpfs); one member runs with heartbeat 10 ms / election 100 ms, more with 50 / 500 ms. A member counts as ready when
 * its {@code GET /health} says healthy (it has a leader), not when its port opens.
 *
 * <p>With {@link Builder#security} the client port serves TLS only ({@link EtcdSecurity}: certificates of a {@link
 * TestPki}, client certificates required if asked, etcd's authentication enabled through {@link #etcdctl} if asked);
 * {@link #clientEndpoints()} are then {@code https} URLs, and readiness is probed on a plaintext metrics URL. A secured
 * cluster needs the local binary.
 *
 * <p>Partitions via the proxies cut clients off from a member; traffic between members is not proxied. To isolate a
 * member from its peers, {@link ServerNode#pause() pause} or {@link ServerNode#kill9() kill} it.
 */
public final class EtcdCluster extends StoreFixture {

    /** Comma-separated client URLs (or {@code host:port}) of a running cluster to use instead of starting one. */
    public static final String ENDPOINTS_VARIABLE = "DISTLOCK_ETCD_ENDPOINTS";

    /** Path of the {@code etcd} binary to run, instead of searching for it. */
    public static final String BINARY_VARIABLE = "DISTLOCK_ETCD_BINARY";

    /** How to install the server (and {@code etcdctl}) on Debian/Ubuntu. */
    public static final String INSTALL_COMMAND = "apt-get install -y etcd-server etcd-client";

    static final String IMAGE = "quay.io/coreos/etcd:v3.5.17";
    private static final int CONTAINER_PORT = 2379;
    private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_GRACE = Duration.ofSeconds(5);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(PROBE_TIMEOUT).build();

    private final int members;
    private final ServerLocator locator;
    private final Optional<EtcdSecurity> security;
    private final OptionalLong quotaBackendBytes;
    private Path etcdctl;
    private final List<String> memberUrls = new ArrayList<>();
    private volatile boolean authEnabled;

    private EtcdCluster(Builder builder) {
        this.members = builder.members;
        this.locator = builder.locator;
        this.security = builder.security;
        this.quotaBackendBytes = builder.quotaBackendBytes;
    }

    /** A builder; one member by default. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The member at {@code index} (0-based); same as {@link #node(int)}.
     *
     * @throws IllegalStateException if not started
     */
    public ServerNode member(int index) {
        return node(index);
    }

    /**
     * Client URLs ({@code http://host:port}) of every member, for clients that connect directly.
     *
     * @throws IllegalStateException if not started
     */
    public List<String> clientEndpoints() {
        return nodes().stream().map(n -> scheme() + n.endpoint()).collect(Collectors.toUnmodifiableList());
    }

    /** The security of the client port, if the cluster was built with one. */
    public Optional<EtcdSecurity> security() {
        return security;
    }

    private String scheme() {
        return security.isPresent() ? "https://" : "http://";
    }

    /**
     * Client URLs of every member's proxy, for clients a test partitions via {@link ServerNode#partition()}.
     *
     * @throws IllegalStateException if not started
     */
    public List<String> proxiedClientEndpoints() {
        return nodes().stream().map(n -> scheme() + n.proxiedEndpoint()).collect(Collectors.toUnmodifiableList());
    }

    @Override
    String describe() {
        return "etcd cluster of " + members + " member" + (members == 1 ? "" : "s")
                + security.map(s -> " with " + s).orElse("")
                + (quotaBackendBytes.isPresent() ? ", space quota " + quotaBackendBytes.getAsLong() + " bytes" : "");
    }

    @Override
    void startNodes() {
        ServerLocator.Choice choice = locator.locate(
                new ServerLocator.Wanted("etcd", ENDPOINTS_VARIABLE, BINARY_VARIABLE, "etcd", INSTALL_COMMAND));
        if (security.isPresent() && choice.source != ServerSource.LOCAL_BINARY) {
            throw new IllegalStateException("A secured etcd cluster needs the local etcd binary (found " + choice.source
                    + "). Install it with: " + INSTALL_COMMAND);
        }
        if (quotaBackendBytes.isPresent() && choice.source == ServerSource.ENVIRONMENT) {
            throw new IllegalStateException("An etcd cluster with a space quota needs a member this fixture starts,"
                    + " not the running one " + ENDPOINTS_VARIABLE + " names");
        }
        switch (choice.source) {
            case ENVIRONMENT:
                useExternal(choice.addresses);
                break;
            case LOCAL_BINARY:
                startProcesses(choice.binary);
                break;
            case CONTAINER:
                startContainer();
                break;
            default:
                throw new IllegalStateException("Unexpected server source " + choice.source);
        }
    }

    /** Whether the member at {@code host:port} answers {@code GET /health} with healthy (so it has a leader). */
    static boolean healthy(String endpoint) {
        try {
            // A secured member serves /health on its plaintext metrics URL, which is what endpoint then names.
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint + "/health"))
                    .timeout(PROBE_TIMEOUT)
                    .GET()
                    .build();
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200
                    && response.body().replace(" ", "").contains("\"health\":\"true\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void useExternal(List<String> endpoints) {
        if (endpoints.size() < members) {
            throw new IllegalStateException(ENDPOINTS_VARIABLE + " lists " + endpoints.size() + " endpoint(s) "
                    + endpoints + " but this fixture needs " + members + " members");
        }
        for (int i = 0; i < members; i++) {
            String endpoint = Endpoints.stripScheme(endpoints.get(i));
            String name = "etcd-" + (i + 1);
            awaitHealthy(name, endpoint, ENDPOINTS_VARIABLE);
            addExternalNode(name, endpoint, "member", ENDPOINTS_VARIABLE);
        }
    }

    private void startProcesses(Path binary) {
        List<String> names = new ArrayList<>();
        List<Integer> clientPorts = new ArrayList<>();
        List<Integer> peerPorts = new ArrayList<>();
        for (int i = 1; i <= members; i++) {
            names.add("etcd-" + i);
            clientPorts.add(FreePorts.next());
            peerPorts.add(FreePorts.next());
        }
        StringBuilder initialCluster = new StringBuilder();
        for (int i = 0; i < members; i++) {
            initialCluster
                    .append(i == 0 ? "" : ",")
                    .append(names.get(i))
                    .append("=http://")
                    .append(Endpoints.loopback(peerPorts.get(i)));
        }
        boolean single = members == 1;
        String heartbeat = single ? "10" : "50";
        String election = single ? "100" : "500";
        String token = "distlock-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        List<ProcessNode> launched = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            String name = names.get(i);
            String clientUrl = scheme() + Endpoints.loopback(clientPorts.get(i));
            memberUrls.add(clientUrl);
            String peerUrl = "http://" + Endpoints.loopback(peerPorts.get(i));
            Path dir = FixtureDirs.create(name);
            // Closed after the process (resources close in reverse): the data goes, the log stays.
            track(FixtureDirs.deleteOnClose(dir.resolve("data")));
            List<String> command = new ArrayList<>(List.of(
                    binary.toString(),
                    "--name",
                    name,
                    "--data-dir",
                    dir.resolve("data").toString(),
                    "--listen-client-urls",
                    clientUrl,
                    "--advertise-client-urls",
                    clientUrl,
                    "--listen-peer-urls",
                    peerUrl,
                    "--initial-advertise-peer-urls",
                    peerUrl,
                    "--initial-cluster",
                    initialCluster.toString(),
                    "--initial-cluster-state",
                    "new",
                    "--initial-cluster-token",
                    token,
                    "--heartbeat-interval",
                    heartbeat,
                    "--election-timeout",
                    election,
                    // etcd 3.4 (Debian's 3.4.23) logs through capnslog by default and then crashes a member whose read
                    // index times out, logging through a nil logger (etcd issue 14402, fixed in 3.4.30): log through
                    // zap
                    "--logger",
                    "zap"));
            quotaBackendBytes.ifPresent(
                    bytes -> command.addAll(List.of("--quota-backend-bytes", Long.toString(bytes))));
            String healthEndpoint = Endpoints.loopback(clientPorts.get(i));
            if (security.isPresent()) {
                command.addAll(security.get().serverFlags());
                healthEndpoint = Endpoints.loopback(FreePorts.next());
                command.addAll(List.of("--listen-metrics-urls", "http://" + healthEndpoint));
            }
            ServerProcess process = track(ServerProcess.builder(name, command)
                    .logFile(dir.resolve(name + ".log"))
                    .stopGrace(STOP_GRACE)
                    .build());
            String endpoint = Endpoints.loopback(clientPorts.get(i));
            TcpProxy proxy = track(TcpProxy.start(name, clientPorts.get(i)));
            String health = healthEndpoint;
            ProcessNode node = new ProcessNode(endpoint, process, () -> healthy(health), READY_TIMEOUT, proxy);
            node.launch();
            launched.add(node);
            addNode(node);
        }
        // Members of a cluster become healthy together, once a leader is elected: launch all, then wait.
        launched.forEach(ProcessNode::awaitReady);
        Path sibling = binary.resolveSibling("etcdctl");
        etcdctl = java.nio.file.Files.isExecutable(sibling) ? sibling : Path.of("etcdctl");
        if (security.flatMap(EtcdSecurity::rootPassword).isPresent()) {
            enableAuth(security.get().rootPassword().get());
        }
    }

    private void enableAuth(String rootPassword) {
        etcdctl("user", "add", EtcdSecurity.ROOT + ":" + rootPassword);
        etcdctl("user", "grant-role", EtcdSecurity.ROOT, "root");
        etcdctl("auth", "enable");
        authEnabled = true;
    }

    /**
     * Runs {@code etcdctl} (beside the {@code etcd} binary) against every member, with the cluster's TLS flags and, once
     * authentication is on, as {@code root}; e.g. {@code etcdctl("role", "add", "locker")}.
     *
     * @return what it printed
     * @throws IllegalStateException if it fails, with its output
     */
    public String etcdctl(String... args) {
        if (etcdctl == null) {
            throw new IllegalStateException(
                    "etcdctl runs only beside a local etcd binary; install it with " + INSTALL_COMMAND);
        }
        List<String> command = new ArrayList<>(
                List.of(etcdctl.toString(), "--endpoints=" + String.join(",", memberUrls), "--command-timeout=10s"));
        security.ifPresent(s -> command.addAll(s.etcdctlFlags(authEnabled)));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("ETCDCTL_API", "3");
        try {
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("etcdctl " + String.join(" ", args) + " failed: " + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run " + etcdctl + "; install it with " + INSTALL_COMMAND, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted running etcdctl", e);
        }
    }

    /**
     * Adds an etcd user with a role of the same name that may read and write every key under each of {@code
     * prefixes} ({@code readwrite <prefix> --prefix=true}); none: a user with no permission.
     */
    public void addUser(String user, String password, String... prefixes) {
        etcdctl("user", "add", user + ":" + password);
        etcdctl("role", "add", user);
        for (String prefix : prefixes) {
            etcdctl("role", "grant-permission", user, "readwrite", prefix, "--prefix=true");
        }
        etcdctl("user", "grant-role", user, user);
    }

    private void startContainer() {
        if (members != 1) {
            throw new IllegalStateException("An etcd cluster of " + members + " members needs the etcd binary"
                    + " (containers give a single member only). Install it with: " + INSTALL_COMMAND);
        }
        List<String> command = new ArrayList<>(List.of(
                "etcd",
                "--listen-client-urls",
                "http://0.0.0.0:" + CONTAINER_PORT,
                "--advertise-client-urls",
                "http://127.0.0.1:" + CONTAINER_PORT));
        quotaBackendBytes.ifPresent(bytes -> command.addAll(List.of("--quota-backend-bytes", Long.toString(bytes))));
        Containers.Running container = track(Containers.start(IMAGE, CONTAINER_PORT, command));
        String endpoint = container.endpoint();
        awaitHealthy("etcd-1", endpoint, "container " + IMAGE);
        addUnmanagedNode(
                "etcd-1",
                endpoint,
                ServerSource.CONTAINER,
                "the member runs in a container (no local etcd; install it with " + INSTALL_COMMAND
                        + " for process faults)");
    }

    private static void awaitHealthy(String name, String endpoint, String origin) {
        Deadlines.await(
                () -> healthy(endpoint),
                READY_TIMEOUT,
                () -> name + " at " + endpoint + " (from " + origin + ") is not healthy (GET /health)");
    }

    /** Builds an {@link EtcdCluster}; nothing starts until the test class (or {@link EtcdCluster#start()}). */
    public static final class Builder {
        private int members = 1;
        private ServerLocator locator = ServerLocator.system();
        private Optional<EtcdSecurity> security = Optional.empty();
        private OptionalLong quotaBackendBytes = OptionalLong.empty();

        private Builder() {}

        /**
         * How many members: usually 1 (fast elections) or 3 (survives the loss of one); default 1.
         *
         * @throws IllegalArgumentException if {@code members < 1}
         */
        public Builder members(int members) {
            if (members < 1) {
                throw new IllegalArgumentException("members must be at least 1, got " + members);
            }
            this.members = members;
            return this;
        }

        /** Secures the client port (TLS, client certificates, authentication); plaintext by default. */
        public Builder security(EtcdSecurity security) {
            this.security = Optional.of(Objects.requireNonNull(security, "security"));
            return this;
        }

        /**
         * The members' space quota ({@code --quota-backend-bytes}; etcd's default is 2 GiB): a small one lets a test
         * fill the database, which etcd then guards with its {@code NOSPACE} alarm, refusing every write.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder quotaBackendBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("quotaBackendBytes must be positive, got " + bytes);
            }
            this.quotaBackendBytes = OptionalLong.of(bytes);
            return this;
        }

        /** For tests of the fixture: where to look for servers. */
        Builder locator(ServerLocator locator) {
            this.locator = Objects.requireNonNull(locator, "locator");
            return this;
        }

        /** The fixture, not started. */
        public EtcdCluster build() {
            return new EtcdCluster(this);
        }
    }
}
