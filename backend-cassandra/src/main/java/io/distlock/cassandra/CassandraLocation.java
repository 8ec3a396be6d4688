package io.distlock.cassandra;

import io.distlock.LockConfigurationException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** The contact points and keyspace of a {@code cassandra://h1:port[,h2:port...]/keyspace} URI. */
record CassandraLocation(List<InetSocketAddress> contactPoints, String keyspace) {

    /** The native protocol's default port. */
    static final int DEFAULT_PORT = 9042;

    private static final Pattern KEYSPACE = Pattern.compile("[A-Za-z0-9_]{1,48}");

    /**
     * Parses the URI (without its query).
     *
     * @throws LockConfigurationException naming what is wrong
     */
    static CassandraLocation parse(URI uri) {
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isBlank()) {
            throw invalid(uri, "no host: expected cassandra://host[:port][,host[:port]...]/keyspace");
        }
        List<InetSocketAddress> points = new ArrayList<>();
        for (String part : authority.split(",", -1)) {
            points.add(hostPort(uri, part.trim()));
        }
        String path = uri.getPath() == null ? "" : uri.getPath();
        String keyspace = path.startsWith("/") ? path.substring(1) : path;
        if (keyspace.isEmpty()) {
            throw invalid(uri, "no keyspace: expected cassandra://host[:port][,...]/keyspace");
        }
        if (!KEYSPACE.matcher(keyspace).matches()) {
            throw invalid(uri, "keyspace '" + keyspace + "' must be 1-48 letters, digits or underscores");
        }
        return new CassandraLocation(List.copyOf(points), keyspace);
    }

    private static InetSocketAddress hostPort(URI uri, String part) {
        if (part.isEmpty()) {
            throw invalid(uri, "empty host in the host list");
        }
        String host = part;
        int port = DEFAULT_PORT;
        int colon = part.lastIndexOf(':');
        if (colon >= 0 && part.indexOf(']') < colon) {
            host = part.substring(0, colon);
            String rawPort = part.substring(colon + 1);
            try {
                port = Integer.parseInt(rawPort);
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 1 || port > 65535) {
                throw invalid(uri, "port '" + rawPort + "' of host '" + host + "' is not in 1..65535");
            }
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty()) {
            throw invalid(uri, "empty host in '" + part + "'");
        }
        return InetSocketAddress.createUnresolved(host, port);
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
