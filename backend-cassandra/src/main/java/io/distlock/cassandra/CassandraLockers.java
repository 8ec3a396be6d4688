package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.Node;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Lockers on a {@link CqlSession} the application already has, with its contact points, credentials, TLS, metrics
 * and pools:
 *
 * <pre>{@code
 * RemoteLocker locker = CassandraLockers.using(session, "locks")
 *         .leaseTime(Duration.ofSeconds(30))
 *         .build();
 * }</pre>
 *
 * <p>The builder takes the backend's lock options ({@link CassandraOptions}: {@code algorithm}, {@code consistency},
 * {@code fencing}, {@code createSchema}, ...) and everything else of {@link RemoteLockerBuilder}; the connection's
 * options ({@code localDatacenter}, {@code user}, {@code password}, the TLS options, {@code driverConfig}) are refused,
 * since the session already decides them. Statements name the keyspace, so the session may be set to another keyspace
 * or none. Closing the locker stops what distlock started (its GlobalTime replica, its timers) and leaves the session
 * open: the application closes it.
 */
public final class CassandraLockers {

    private CassandraLockers() {}

    /**
     * A locker builder whose locks live in {@code keyspace} through {@code session}.
     *
     * @param session an open session; distlock never closes it
     * @param keyspace the keyspace of the lock tables (created with option {@code createSchema=true}, or beforehand)
     * @return a builder with the URI {@code cassandra://<the session's nodes>/<keyspace>} (for messages) and a provider
     *     bound to {@code session}
     * @throws LockConfigurationException if the session is closed or the keyspace name is malformed
     */
    public static RemoteLockerBuilder using(CqlSession session, String keyspace) {
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(keyspace, "keyspace");
        if (session.isClosed()) {
            throw new LockConfigurationException("The CqlSession given to CassandraLockers.using is closed");
        }
        String uri = "cassandra://" + hosts(session) + "/" + keyspace;
        CassandraLocation.parse(java.net.URI.create(uri)); // checks the keyspace name now, not at build()
        return RemoteLockers.builder().uri(uri).provider(new SessionBoundProvider(session));
    }

    /** The session's nodes as {@code host:port,...}; a placeholder if it knows none. */
    private static String hosts(CqlSession session) {
        String hosts = session.getMetadata().getNodes().values().stream()
                .map(Node::getEndPoint)
                .map(endPoint -> endPoint.resolve())
                .filter(InetSocketAddress.class::isInstance)
                .map(InetSocketAddress.class::cast)
                .map(a -> a.getHostString() + ":" + a.getPort())
                .sorted()
                .collect(Collectors.joining(","));
        return hosts.isEmpty() ? "application-session" : hosts;
    }
}
