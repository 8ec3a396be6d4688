package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.EndPoint;
import com.datastax.oss.driver.api.core.metadata.Node;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.HostList;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Collection;
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
 * <p>The builder takes the backend's lock options ({@link CassandraLockOptions}: {@code algorithm}, {@code consistency},
 * {@code fencing}, {@code createSchema}, ...) and everything else of {@link RemoteLockerBuilder}; the connection's
 * options ({@code localDatacenter}, {@code user}, {@code password}, the TLS options, {@code driverConfig}) are refused,
 * since the session already decides them. Statements name the keyspace, so the session may be set to another keyspace
 * or none. Closing the locker stops what distlock started (its GlobalTime replica, its timers) and leaves the session
 * open: the application closes it.
 */
public final class CassandraLockers {

    /** The URI's authority on an application's session, and the description of a session that knows no node. */
    static final String SESSION = "application-session";

    private CassandraLockers() {}

    /**
     * A locker builder whose locks live in {@code keyspace} through {@code session}.
     *
     * @param session an open session; distlock never closes it
     * @param keyspace the keyspace of the lock tables (created with option {@code createSchema=true}, or beforehand)
     * @return a builder with the URI {@code cassandra://application-session/<keyspace>} and a provider bound to {@code
     *     session}; messages name the session's nodes as it knows them when the locker opens
     * @throws LockConfigurationException if the session is closed or the keyspace name is malformed
     */
    public static RemoteLockerBuilder using(CqlSession session, String keyspace) {
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(keyspace, "keyspace");
        if (session.isClosed()) {
            throw new LockConfigurationException("The CqlSession given to CassandraLockers.using is closed");
        }
        // The nodes are not in the URI: their addresses need not make one (several IPv6 nodes cannot, in
        // java.net.URI) nor pass the host list's checks (behind an SNI proxy every node has the proxy's address).
        String uri = "cassandra://" + SESSION + "/" + keyspace;
        CassandraLocation.keyspace(URI.create(uri)); // checks the keyspace name now, not at build()
        return RemoteLockers.builder().uri(uri).provider(new ApplicationClientProvider(session));
    }

    /** The session's nodes, for messages; see {@link #describe(Collection)}. */
    static String describe(CqlSession session) {
        return describe(session.getMetadata().getNodes().values().stream()
                .map(Node::getEndPoint)
                .toList());
    }

    /**
     * Nodes' end points as {@code host:port,...}, sorted, IPv6 addresses in brackets, each address once (nodes behind
     * one SNI proxy all resolve to it); {@value #SESSION} if there are none. A description for messages, never parsed.
     */
    static String describe(Collection<EndPoint> endPoints) {
        String hosts = endPoints.stream()
                .map(EndPoint::resolve)
                .map(address -> address instanceof InetSocketAddress a
                        ? new HostList.Address(a.getHostString(), a.getPort()).toString()
                        : String.valueOf(address))
                .distinct()
                .sorted()
                .collect(Collectors.joining(","));
        return hosts.isEmpty() ? SESSION : hosts;
    }
}
