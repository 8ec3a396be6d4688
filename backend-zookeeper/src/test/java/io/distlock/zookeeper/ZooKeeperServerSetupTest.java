package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.FreePorts;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Why opening got no session, as the failure names it once the connect timeout has passed: the ZooKeeper client says
 * only that it is not connected, so opening asks each server itself ({@link ZkServerProbe}). Nothing listening, a
 * server beyond its {@code maxClientCnxns} from this address (it closes the connection unanswered), and a server
 * whose ensemble lost its quorum (it answers that it is not serving) each read differently; all fail within the
 * connect timeout. The TLS-only port is {@link ZooKeeperTlsPortTest}'s.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ZooKeeperServerSetupTest {

    private static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(2));

    @Test
    void open_whereNothingListens_failsNamingIt() {
        String at = "127.0.0.1:" + FreePorts.next();
        assertOpenFails(at, at + ": nothing listens");
    }

    @Test
    void open_onAServerAtItsMaxClientCnxns_failsNamingTheLimit() throws Exception {
        try (TestingServer server = ZkTestServers.serverWithMaxClientCnxns(1)) {
            ZooKeeper first = new ZooKeeper(server.getConnectString(), 30_000, event -> {});
            try {
                Conditions.await("the first client connected", CONNECT_TIMEOUT, () -> first.getState()
                        .isConnected());
                assertOpenFails(
                        server.getConnectString(),
                        server.getConnectString() + ": a server accepts connections and closes them unanswered: it"
                                + " takes no more connections from this address (maxClientCnxns, 60 by default)");
            } finally {
                first.close();
            }
        }
    }

    @Test
    void open_onAServerWhoseEnsembleLostItsQuorum_failsNamingIt() throws Exception {
        try (TestingCluster cluster = ZkTestServers.cluster(3)) {
            InstanceSpec left = cluster.getInstances().iterator().next();
            for (InstanceSpec other : cluster.getInstances()) {
                if (other != left) {
                    assertThat(cluster.killServer(other)).isTrue();
                }
            }
            String at = left.getConnectString();
            Conditions.await("the last server stopped serving", TestTimeouts.scaled(Duration.ofSeconds(30)), () -> {
                try {
                    assertOpenFails(at, at + ": a server runs but serves no client: its ensemble has no quorum");
                    return true;
                } catch (AssertionError notYet) {
                    return false;
                }
            });
        }
    }

    /** Opening on {@code at} fails within the connect timeout (and a little), naming {@code why}. */
    private static void assertOpenFails(String at, String why) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> {
                    try (RemoteLocker locker = RemoteLockers.builder()
                            .uri("zk://" + at + "/setup")
                            .connectTimeout(CONNECT_TIMEOUT)
                            .build()) {
                        locker.tryLock("never");
                    }
                })
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("within " + CONNECT_TIMEOUT.toSeconds() + "s (option connectTimeout): ")
                .hasMessageContaining(why);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofMillis(500))));
    }
}
