package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.Deadlines;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Three in-process ZooKeeper servers, driven with a plain Curator client through the proxies. */
@Timeout(120)
class ZooKeeperEnsembleTest {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(3).build();

    private static final Duration LONG = Duration.ofSeconds(20);

    private CuratorFramework client;
    private final AtomicReference<ConnectionState> lastState = new AtomicReference<>();

    @BeforeEach
    void connect() throws InterruptedException {
        client = CuratorFrameworkFactory.builder()
                .connectString(ZK.proxiedConnectString())
                .sessionTimeoutMs(6_000)
                .connectionTimeoutMs(2_000)
                .retryPolicy(new RetryNTimes(100, 100))
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> lastState.set(state));
        client.start();
        assertThat(client.blockUntilConnected((int) LONG.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private String read(String path) throws Exception {
        return new String(client.getData().forPath(path), StandardCharsets.UTF_8);
    }

    private void write(String path, String value) throws Exception {
        client.create().orSetData().forPath(path, value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void start_runsInProcessEnsembleOfThree() throws Exception {
        assertThat(ZK.source()).isEqualTo(ServerSource.IN_PROCESS);
        assertThat(ZK.connectString().split(",")).hasSize(3);
        assertThat(ZK.proxiedConnectString().split(",")).hasSize(3);

        write("/start", "ok");

        assertThat(read("/start")).isEqualTo("ok");
    }

    @Test
    void kill9_ofOneServer_leavesMajorityServing_andRestartRejoins() throws Exception {
        ZK.server(0).kill9();
        assertThat(ZK.server(0).isRunning()).isFalse();

        write("/while-one-down", "1");
        assertThat(read("/while-one-down")).isEqualTo("1");

        ZK.server(0).restart();

        assertThat(ZK.server(0).isRunning()).isTrue();
        // A client of the restarted server alone sees the write it missed: the server rejoined and caught up.
        CuratorFramework only0 = CuratorFrameworkFactory.newClient(ZK.server(0).endpoint(), new RetryNTimes(100, 100));
        try (only0) {
            only0.start();
            assertThat(new String(only0.getData().forPath("/while-one-down"), StandardCharsets.UTF_8))
                    .isEqualTo("1");
        }
    }

    @Test
    void serverIn_leader_waitsOutTheElectionAfterTheLeaderIsKilled() {
        int leader = ZK.serverIn("leader");
        ZK.server(leader).kill9();

        // Asked at once, while the two left are still electing: no server serves, so none reports a mode yet.
        int next = ZK.serverIn("leader");

        assertThat(next).isNotEqualTo(leader);
        assertThat(ZK.mode(next)).isEqualTo("leader");
    }

    @Test
    void partition_ofAllProxies_suspendsClient_andHealReconnects() throws Exception {
        write("/before-partition", "p");

        ZK.nodes().forEach(ServerNode::partition);

        Deadlines.await(
                () -> lastState.get() == ConnectionState.SUSPENDED,
                LONG,
                () -> "client not suspended while partitioned (last state " + lastState.get() + ")");

        ZK.nodes().forEach(ServerNode::heal);

        Deadlines.await(
                () -> lastState.get() == ConnectionState.RECONNECTED,
                LONG,
                () -> "client did not reconnect after heal (last state " + lastState.get() + ")");
        assertThat(read("/before-partition")).isEqualTo("p");
    }

    @Test
    void resetFaults_restoresQuorum_afterEveryServerWentDown() throws Exception {
        write("/before-outage", "o");
        ZK.server(0).stop();
        ZK.server(1).kill9();
        ZK.server(2).stop();

        ZK.resetFaults();

        assertThat(ZK.nodes()).allMatch(ServerNode::isRunning);
        assertThat(read("/before-outage")).isEqualTo("o");
    }

    @Test
    void pause_isUnsupportedInProcess_withReason() {
        assertThatThrownBy(() -> ZK.server(1).pause())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("zk-2")
                .hasMessageContaining("inside the test JVM");
    }
}
