package io.distlock.testing;

import com.datastax.oss.driver.api.core.CqlSession;
import java.net.InetSocketAddress;
import java.util.List;

/** Where a {@link CassandraCluster}'s servers come from: an external cluster, forked JVMs, or a container. */
interface CassandraServers extends AutoCloseable {

    /** The addresses clients are given. */
    List<InetSocketAddress> contactPoints();

    /** The data center clients name as local. */
    String localDatacenter();

    /** The number of nodes. */
    int size();

    /** Where the servers come from. */
    ServerSource source();

    /** A session for the fixture's DDL (keyspaces); the caller closes it. */
    CqlSession adminSession();

    /**
     * The forked cluster, for fault controls.
     *
     * @throws UnsupportedOperationException if the servers are not forked JVMs of this fixture
     */
    ForkedCassandra forked();

    /** Stops what this fixture started; leaves external servers alone. */
    @Override
    void close();
}
