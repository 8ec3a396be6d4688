package io.distlock.testing;

import com.datastax.oss.driver.api.core.CqlSession;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** A Cassandra cluster the fixture did not start, named by {@value CassandraCluster#CONTACT_POINTS_ENV}. */
final class ExternalCassandra implements CassandraServers {

    private static final int DEFAULT_PORT = 9042;

    private final List<InetSocketAddress> contactPoints;
    private final String localDatacenter;
    private final int size;

    private ExternalCassandra(List<InetSocketAddress> contactPoints, String localDatacenter, int size) {
        this.contactPoints = contactPoints;
        this.localDatacenter = localDatacenter;
        this.size = size;
    }

    /**
     * Connects to the cluster at {@code contactPoints} ({@code host[:port],...}, port 9042 by default) to check it
     * answers and count its nodes.
     *
     * @throws IllegalArgumentException if {@code contactPoints} is malformed
     * @throws IllegalStateException if the cluster cannot be reached
     */
    static ExternalCassandra connect(String contactPoints, String localDatacenter) {
        List<InetSocketAddress> addresses = parse(contactPoints);
        try (CqlSession session = CassandraSessions.client(addresses, localDatacenter, null)) {
            session.execute("SELECT release_version FROM system.local");
            int size = session.getMetadata().getNodes().size();
            return new ExternalCassandra(addresses, localDatacenter, size);
        } catch (RuntimeException e) {
            throw new IllegalStateException(
                    "Cannot reach the Cassandra cluster at " + CassandraCluster.CONTACT_POINTS_ENV
                            + "=" + contactPoints + " (local data center '" + localDatacenter + "', set "
                            + CassandraCluster.LOCAL_DATACENTER_ENV + " if it differs): " + e,
                    e);
        }
    }

    static List<InetSocketAddress> parse(String contactPoints) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (String raw : contactPoints.split(",")) {
            String entry = raw.trim();
            if (entry.isEmpty()) {
                continue;
            }
            int colon = entry.lastIndexOf(':');
            String host = colon < 0 ? entry : entry.substring(0, colon);
            int port = DEFAULT_PORT;
            if (colon >= 0) {
                try {
                    port = Integer.parseInt(entry.substring(colon + 1));
                } catch (NumberFormatException e) {
                    port = -1;
                }
                if (port < 1 || port > 65535) {
                    throw new IllegalArgumentException(CassandraCluster.CONTACT_POINTS_ENV + ": bad port in '" + entry
                            + "'; expected host[:port],host[:port],...");
                }
            }
            addresses.add(InetSocketAddress.createUnresolved(host, port));
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException(
                    CassandraCluster.CONTACT_POINTS_ENV + " is empty; expected host[:port],host[:port],...");
        }
        return List.copyOf(addresses);
    }

    @Override
    public List<InetSocketAddress> contactPoints() {
        return contactPoints;
    }

    @Override
    public String localDatacenter() {
        return localDatacenter;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public ServerSource source() {
        return ServerSource.ENVIRONMENT;
    }

    @Override
    public CqlSession adminSession() {
        return CassandraSessions.client(contactPoints, localDatacenter, null);
    }

    @Override
    public ForkedCassandra forked() {
        throw new UnsupportedOperationException("Fault controls need a cluster this fixture forks; the servers come"
                + " from " + CassandraCluster.CONTACT_POINTS_ENV + " (" + contactPoints + "). Unset it to run"
                + " fault tests.");
    }

    /** Leaves the external cluster alone. */
    @Override
    public void close() {}

    @Override
    public String toString() {
        return "ExternalCassandra" + contactPoints;
    }
}
