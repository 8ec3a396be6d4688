package io.distlock.cassandra;

import io.distlock.LockConfigurationException;
import io.distlock.spi.HostList;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.regex.Pattern;

/** The contact points and keyspace of a {@code cassandra://h1:port[,h2:port...]/keyspace} URI. */
record CassandraLocation(List<InetSocketAddress> contactPoints, String keyspace) {

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
        List<InetSocketAddress> points = HostList.parse(uri, "Cassandra", DEFAULT_PORT, EXPECTED).addresses().stream()
                .map(a -> InetSocketAddress.createUnresolved(a.host(), a.port()))
                .toList();
        String path = uri.getPath() == null ? "" : uri.getPath();
        String keyspace = path.startsWith("/") ? path.substring(1) : path;
        if (keyspace.isEmpty()) {
            throw invalid(uri, "no keyspace: expected cassandra://host[:port][,...]/keyspace");
        }
        if (!KEYSPACE.matcher(keyspace).matches()) {
            throw invalid(uri, "keyspace '" + keyspace + "' must be 1-48 letters, digits or underscores");
        }
        return new CassandraLocation(points, keyspace);
    }

    /** {@code h1:p1,h2:p2}, for messages. */
    String hosts() {
        StringBuilder b = new StringBuilder();
        for (InetSocketAddress a : contactPoints) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(a.getHostString()).append(':').append(a.getPort());
        }
        return b.toString();
    }

    private static LockConfigurationException invalid(URI uri, String why) {
        return new LockConfigurationException("Invalid Cassandra URI '" + uri + "': " + why);
    }
}
