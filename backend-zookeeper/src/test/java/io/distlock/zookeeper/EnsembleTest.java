package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Against a 3-server ensemble: losing one server, even the one a holder is connected to, keeps locking working. */
@Timeout(180)
class EnsembleTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static TestingCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = ZkTestServers.cluster(3);
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String uri() {
        return "zk://" + cluster.getConnectString() + "/ensemble?sessionTimeout=10s";
    }

    @Test
    void lockingGoesOn_afterLosingTheServerTheHolderIsConnectedTo() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker holder =
                        RemoteLockers.builder().uri(uri()).provider(provider).build();
                RemoteLocker other = RemoteLockers.open(uri())) {
            RemoteLock lock = holder.lock("ensemble", WAIT);
            long token = lock.fencingToken().orElseThrow();
            InstanceSpec connectedTo = cluster.findConnectionInstance(
                    provider.opened().client().getZookeeperClient().getZooKeeper());
            assertThat(cluster.killServer(connectedTo)).isTrue();

            Conditions.await(
                    "the holder reconnected",
                    WAIT,
                    () -> provider.opened().client().getZookeeperClient().isConnected());
            assertThat(lock.isHeld()).isTrue();
            assertThat(other.tryLock("ensemble")).isEmpty();
            lock.close();
            try (RemoteLock next = other.lock("ensemble", WAIT)) {
                assertThat(next.fencingToken().orElseThrow()).isGreaterThan(token);
                assertThat(holder.tryLock("ensemble")).isEmpty();
            }
            try (RemoteLock back = holder.lock("ensemble", WAIT)) {
                assertThat(back.isHeld()).isTrue();
            }
        }
    }
}
