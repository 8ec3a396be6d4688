package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.testing.TcpProxy;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** Lockers on the application's own session, on one node. */
class CassandraLockersTest extends OneNodeFixture {

    @Test
    void lockersUsing_sessionWhoseNodeHasAnIpv6Address_buildsAndLocks() {
        // The application's session reaches the node at [::1], through a proxy there: its node's end point is IPv6.
        try (TcpProxy proxy = TcpProxy.start(
                        "ipv6",
                        new InetSocketAddress("::1", 0),
                        CASSANDRA.contactPoints().get(0));
                CqlSession v6 = CqlSession.builder()
                        .addContactPoint(proxy.listenAddress())
                        .withLocalDatacenter(CASSANDRA.localDatacenter())
                        .build()) {
            assertThat(v6.getMetadata().getNodes().values())
                    .extracting(node -> ((InetSocketAddress) node.getEndPoint().resolve()).getAddress())
                    .allMatch(address -> address instanceof java.net.Inet6Address);
            String key = key("ipv6");
            try (RemoteLocker locker =
                    CassandraLockers.using(v6, CASSANDRA.keyspace()).build()) {
                RemoteLock lock = locker.tryLock(key).orElseThrow();
                assertThat(cellsOf(key)).isNotEmpty();
                lock.release();
            }
            assertThat(cellsOf(key)).isEmpty();
            assertThat(v6.isClosed()).isFalse();
        }
    }
}
