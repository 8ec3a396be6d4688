package io.distlock.testing;

import io.distlock.kit.Deadlines;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

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

    private final int count;
    private final ServerLocator locator;

    private RedisServers(Builder builder) {
        this.count = builder.count;
        this.locator = builder.locator;
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

    @Override
    String describe() {
        return count + " Redis server" + (count == 1 ? "" : "s");
    }

    @Override
    void startNodes() {
        ServerLocator.Choice choice = locator.locate(new ServerLocator.Wanted(
                "Redis", ADDRESSES_VARIABLE, BINARY_VARIABLE, "redis-server", INSTALL_COMMAND));
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
        List<ProcessNode> started = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String name = "redis-" + i;
            int port = FreePorts.next();
            String endpoint = Endpoints.loopback(port);
            Path dir = FixtureDirs.create(name);
            ServerProcess process = track(ServerProcess.builder(
                            name,
                            List.of(
                                    binary.toString(),
                                    "--port",
                                    Integer.toString(port),
                                    "--bind",
                                    "127.0.0.1",
                                    "--save",
                                    "",
                                    "--appendonly",
                                    "no",
                                    "--daemonize",
                                    "no",
                                    "--dir",
                                    dir.toString()))
                    .logFile(dir.resolve(name + ".log"))
                    .build());
            TcpProxy proxy = track(TcpProxy.start(name, port));
            ProcessNode node =
                    new ProcessNode(endpoint, process, () -> Resp.ping(endpoint, PROBE_TIMEOUT), READY_TIMEOUT, proxy);
            node.launch();
            started.add(node);
            addNode(node);
        }
        started.forEach(ProcessNode::awaitReady);
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

        private Builder() {}

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
