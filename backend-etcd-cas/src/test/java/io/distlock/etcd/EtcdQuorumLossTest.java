package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cluster that has lost its quorum takes no write, so to a client its members look unreachable, though each still
 * answers a status request at once: opening, which asks them once its wait has failed ({@link MemberStatus}), says
 * that the cluster has no leader, within the connect timeout, where it asked whether the cluster was running.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdQuorumLossTest {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();

    @Test
    void open_onAClusterThatLostItsQuorum_failsNamingIt() throws Exception {
        Duration connect = TestTimeouts.scaled(Duration.ofSeconds(3));
        String uri = EtcdTesting.uri(ETCD, "/quorum");
        try (RemoteLocker before =
                RemoteLockers.builder().uri(uri).connectTimeout(connect).build()) {
            assertThat(before.tryLock("before")).isPresent();
        }
        ETCD.member(1).kill9();
        ETCD.member(2).kill9();
        long start = System.nanoTime();
        assertThatThrownBy(() ->
                        RemoteLockers.builder().uri(uri).connectTimeout(connect).build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("within " + connect.toSeconds() + "s (option connectTimeout): the cluster has no"
                        + " leader, so it takes no write: it has lost its quorum")
                .hasMessageContaining(
                        ETCD.clientEndpoints().get(0) + " (etcdserver: no leader) answered without a" + " leader")
                .hasMessageContaining("did not answer within")
                .hasMessageNotContaining("is the cluster running");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(connect.plus(TestTimeouts.scaled(Duration.ofMillis(500))));
    }
}
