package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One in-process ZooKeeper server. */
@Timeout(60)
class ZooKeeperServerTest {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private static CuratorFramework client(String connect) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(6_000)
                .connectionTimeoutMs(2_000)
                .retryPolicy(new RetryNTimes(100, 100))
                .build();
        c.start();
        assertThat(c.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
        return c;
    }

    @Test
    void stop_thenRestart_keepsDataOnSamePort() throws Exception {
        assertThat(ZK.source()).isEqualTo(ServerSource.IN_PROCESS);
        String connect = ZK.connectString();
        try (CuratorFramework c = client(connect)) {
            c.create().forPath("/kept", "v".getBytes(StandardCharsets.UTF_8));
        }

        ZK.server(0).stop();
        assertThat(ZK.server(0).isRunning()).isFalse();
        ZK.server(0).restart();

        assertThat(ZK.connectString()).isEqualTo(connect);
        try (CuratorFramework c = client(ZK.proxiedConnectString())) {
            assertThat(new String(c.getData().forPath("/kept"), StandardCharsets.UTF_8))
                    .isEqualTo("v");
        }
    }

    @Test
    void resetFaults_restartsStoppedServer() throws Exception {
        ZK.server(0).kill9();

        ZK.resetFaults();

        assertThat(ZK.server(0).isRunning()).isTrue();
        try (CuratorFramework c = client(ZK.proxiedConnectString())) {
            assertThat(c.checkExists().forPath("/")).isNotNull();
        }
    }
}
