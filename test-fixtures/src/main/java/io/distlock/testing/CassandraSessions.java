package io.distlock.testing;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import com.datastax.oss.driver.api.core.loadbalancing.NodeDistance;
import io.distlock.kit.TestTimeouts;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * Driver sessions the fixture opens: client sessions (through the advertised addresses, i.e. the proxies) and
 * <em>pinned</em> sessions that talk to one node directly and ignore every other node, for the fixture's own readiness
 * and health checks, which must not depend on the proxies' mode or on the other nodes.
 */
final class CassandraSessions {

    /** The data center of {@code SimpleSnitch}, which the forked nodes use. */
    static final String DEFAULT_DATACENTER = "datacenter1";

    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    /** Longer than the server's own timeouts, so a slow server answers with its timeout error rather than none. */
    static final Duration CLIENT_REQUEST_TIMEOUT =
            Duration.ofMillis(CassandraNodeConfig.SERVER_READ_TIMEOUT_MILLIS + 2_000);

    private CassandraSessions() {}

    /** A session over {@code contactPoints}, with the keyspace set if not null. Blocks until connected. */
    static CqlSession client(List<InetSocketAddress> contactPoints, String localDatacenter, String keyspace) {
        return client(contactPoints, localDatacenter, keyspace, null);
    }

    /** As above; logged in and over TLS when {@code security} is not null. */
    static CqlSession client(
            List<InetSocketAddress> contactPoints,
            String localDatacenter,
            String keyspace,
            CassandraSecurity security) {
        CqlSessionBuilder builder = CqlSession.builder()
                .addContactPoints(contactPoints)
                .withLocalDatacenter(localDatacenter)
                .withConfigLoader(
                        baseConfig(TestTimeouts.scaled(CLIENT_REQUEST_TIMEOUT)).build());
        if (keyspace != null) {
            builder.withKeyspace(keyspace);
        }
        if (security != null) {
            security.applyTo(builder);
        }
        return builder.build();
    }

    /** A session that uses {@code node} only: the others are ignored (no pools, no requests). Blocks until connected. */
    static CqlSession pinned(InetSocketAddress node, String localDatacenter) {
        return pinned(node, localDatacenter, null);
    }

    /** As above; logged in and over TLS when {@code security} is not null. */
    static CqlSession pinned(InetSocketAddress node, String localDatacenter, CassandraSecurity security) {
        CqlSessionBuilder builder = CqlSession.builder()
                .addContactPoint(node)
                .withLocalDatacenter(localDatacenter)
                .withConfigLoader(baseConfig(TestTimeouts.scaled(PROBE_TIMEOUT))
                        .withBoolean(DefaultDriverOption.METADATA_TOKEN_MAP_ENABLED, false)
                        .withBoolean(DefaultDriverOption.RECONNECT_ON_INIT, false)
                        .withInt(DefaultDriverOption.CONNECTION_POOL_LOCAL_SIZE, 1)
                        .build())
                .withNodeDistanceEvaluator(
                        (n, dc) -> node.equals(n.getEndPoint().resolve()) ? null : NodeDistance.IGNORED);
        if (security != null) {
            security.applyTo(builder);
        }
        return builder.build();
    }

    /**
     * Whether {@code node} accepts a CQL connection and answers {@code SELECT release_version FROM system.local}.
     * Cheap while the port is closed (one refused connect); opens and closes a pinned session once it is open.
     */
    static boolean answers(InetSocketAddress node, String localDatacenter) {
        return answers(node, localDatacenter, null);
    }

    /** As above, logged in and over TLS when {@code security} is not null. */
    static boolean answers(InetSocketAddress node, String localDatacenter, CassandraSecurity security) {
        if (!portOpen(node)) {
            return false;
        }
        return onPinned(
                node,
                localDatacenter,
                security,
                session -> session.execute("SELECT release_version FROM system.local")
                                .one()
                        != null);
    }

    /**
     * Runs {@code query} on a new {@linkplain #pinned pinned} session and closes the session in the background, where
     * its admin loop's quiet period passes: the health checks open one per attempt, and need not wait for it.
     */
    static <T> T onPinned(
            InetSocketAddress node, String localDatacenter, CassandraSecurity security, Function<CqlSession, T> query) {
        CqlSession session = pinned(node, localDatacenter, security);
        try {
            return query.apply(session);
        } finally {
            session.closeAsync();
        }
    }

    /** Whether something accepts TCP connections at {@code address}, within 200 ms. */
    static boolean portOpen(InetSocketAddress address) {
        try (Socket socket = new Socket()) {
            socket.connect(address, 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static ProgrammaticDriverConfigLoaderBuilder baseConfig(Duration requestTimeout) {
        return DriverConfigLoader.programmaticBuilder()
                // Closing a session waits for the driver's I/O loops to stay idle this long (2 s by default): the
                // fixture opens and closes sessions for every health check.
                .withInt(DefaultDriverOption.NETTY_IO_SHUTDOWN_QUIET_PERIOD, 0)
                // Reconnect within a second or two after a fault heals (default backs off to 60 s).
                .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
                .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(2))
                // As the backend's own sessions (see its CassandraConnection): without a quiet period the admin
                // loop can end before the closing thread listens on the close it handed it, and Netty logs an ERROR
                // (twice in a CI run from the health checks' sessions). The checks close theirs in the background
                // (onPinned), so that they do not wait it.
                .withString(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_UNIT, "MILLISECONDS")
                .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_QUIET_PERIOD, 100)
                .withInt(DefaultDriverOption.NETTY_ADMIN_SHUTDOWN_TIMEOUT, 15_000)
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, requestTimeout)
                // A schema change returns once the driver has refreshed its schema, which it otherwise gathers for a
                // second first: every test class creates and drops a keyspace.
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, TestTimeouts.scaled(PROBE_TIMEOUT))
                .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, TestTimeouts.scaled(PROBE_TIMEOUT))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, TestTimeouts.scaled(PROBE_TIMEOUT))
                .withDuration(
                        DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT,
                        TestTimeouts.scaled(Duration.ofSeconds(30)));
    }
}
