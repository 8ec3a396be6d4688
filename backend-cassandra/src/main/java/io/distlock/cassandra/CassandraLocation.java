package io.distlock.cassandra;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.HostList;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The contact points and keyspace of a {@code cassandra://h1:port[,h2:port...]/keyspace} URI, or of an application's
 * session ({@link #onSession}).
 *
 * @param contactPoints where to connect; empty on an application's session
 * @param keyspace the keyspace of the lock tables
 * @param hosts the nodes for messages: {@code h1:p1,h2:p2} (IPv6 addresses in brackets), or a session's description
 */
record CassandraLocation(List<InetSocketAddress> contactPoints, String keyspace, String hosts) {

    /** The native protocol's default port. */
    static final int DEFAULT_PORT = 9042;

    private static final String EXPECTED = "expected cassandra://host[:port][,host[:port]...]/keyspace";

    private static final Pattern KEYSPACE = Pattern.compile("[A-Za-z0-9_]{1,48}");

    /**
     * Parses the URI (without its query).
     *
     * @throws LockConfigurationException naming what is wrong
     */
    static CassandraLocation parse(URI uri) {
        HostList hosts = HostList.parse(uri, "Cassandra", DEFAULT_PORT, EXPECTED);
        List<InetSocketAddress> points = hosts.addresses().stream()
                .map(a -> InetSocketAddress.createUnresolved(a.host(), a.port()))
                .toList();
        return new CassandraLocation(points, keyspace(uri), hosts.toString());
    }

    /**
     * The location of an application's session: {@code uri}'s keyspace, and {@code description} of the session's
     * nodes for messages, which no host parser reads (an IPv6 cluster or nodes behind one proxy need not make a URI).
     *
     * @throws LockConfigurationException if the keyspace is missing or malformed
     */
    static CassandraLocation onSession(URI uri, String description) {
        return new CassandraLocation(List.of(), keyspace(uri), description);
    }

    /** {@code uri}'s keyspace, checked. */
    static String keyspace(URI uri) {
        String path = uri.getPath() == null ? "" : uri.getPath();
        String keyspace = path.startsWith("/") ? path.substring(1) : path;
        if (keyspace.isEmpty()) {
            throw invalid(uri, "no keyspace: expected cassandra://host[:port][,...]/keyspace");
        }
        if (!KEYSPACE.matcher(keyspace).matches()) {
            throw invalid(uri, "keyspace '" + keyspace + "' must be 1-48 letters, digits or underscores");
        }
        return keyspace;
    }

    private static LockConfigurationException invalid(URI uri, String why) {
        return new LockConfigurationException("Invalid Cassandra URI '" + uri + "': " + why);
    }
}
