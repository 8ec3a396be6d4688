package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two local redis-server processes, driven with raw RESP. */
@Timeout(60)
class RedisServersTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(2).build();

    private static final Duration SHORT = Duration.ofMillis(300);
    private static final Duration LONG = Duration.ofSeconds(5);

    @Test
    void start_runsIndependentLocalServers() throws IOException {
        assertThat(REDIS.source()).isEqualTo(ServerSource.LOCAL_BINARY);
        assertThat(REDIS.endpoints()).hasSize(2).doesNotHaveDuplicates();
        assertThat(REDIS.proxiedEndpoints()).hasSize(2).doesNotContainAnyElementsOf(REDIS.endpoints());

        assertThat(Resp.command(REDIS.endpoints().get(0), LONG, "SET", "independent", "one"))
                .isEqualTo("OK");

        assertThat(Resp.command(REDIS.endpoints().get(0), LONG, "GET", "independent"))
                .isEqualTo("one");
        assertThat(Resp.command(REDIS.endpoints().get(1), LONG, "GET", "independent"))
                .isNull();
    }

    @Test
    void proxy_forwardsCommands() throws IOException {
        String proxied = REDIS.node(1).proxiedEndpoint();
        assertThat(Resp.command(proxied, LONG, "SET", "via-proxy", "v")).isEqualTo("OK");
        assertThat(Resp.command(REDIS.node(1).endpoint(), LONG, "GET", "via-proxy"))
                .isEqualTo("v");
    }

    @Test
    void kill9_takesServerDown_andRestartBringsItBackEmpty() throws IOException {
        ServerNode node = REDIS.node(0);
        Resp.command(node.endpoint(), LONG, "SET", "volatile", "x");

        node.kill9();

        assertThat(node.isRunning()).isFalse();
        assertThat(Resp.ping(node.endpoint(), SHORT)).isFalse();
        assertThat(Resp.ping(REDIS.node(1).endpoint(), LONG)).isTrue();

        node.restart();

        assertThat(node.isRunning()).isTrue();
        assertThat(Resp.command(node.endpoint(), LONG, "GET", "volatile")).isNull();
    }

    @Test
    void stop_thenRestart_onSamePort() {
        ServerNode node = REDIS.node(1);
        String endpoint = node.endpoint();

        node.stop();
        assertThat(Resp.ping(endpoint, SHORT)).isFalse();

        node.restart();
        assertThat(node.endpoint()).isEqualTo(endpoint);
        assertThat(Resp.ping(endpoint, LONG)).isTrue();
    }

    @Test
    void pause_makesServerSilent_andResumeAnswersHeldCommand() throws IOException {
        ServerNode node = REDIS.node(0);
        node.pause();

        assertThatThrownBy(() -> Resp.command(node.endpoint(), SHORT, "PING"))
                .isInstanceOf(SocketTimeoutException.class);

        node.resume();
        assertThat(Resp.command(node.endpoint(), LONG, "PING")).isEqualTo("PONG");
    }

    @Test
    void partition_timesOutProxiedClients_andHealRestoresThem() throws IOException {
        ServerNode node = REDIS.node(0);
        node.partition();

        assertThatThrownBy(() -> Resp.command(node.proxiedEndpoint(), SHORT, "PING"))
                .isInstanceOf(SocketTimeoutException.class);
        assertThat(Resp.ping(node.endpoint(), LONG))
                .as("direct clients are not partitioned")
                .isTrue();

        node.heal();
        assertThat(Resp.command(node.proxiedEndpoint(), LONG, "PING")).isEqualTo("PONG");
    }

    @Test
    void disconnect_failsProxiedClientsFast() {
        ServerNode node = REDIS.node(1);
        node.disconnect();

        assertThatThrownBy(() -> Resp.command(node.proxiedEndpoint(), LONG, "PING"))
                .isInstanceOf(IOException.class)
                .isNotInstanceOf(SocketTimeoutException.class);
    }

    @Test
    void resetFaults_healsResumesAndRestartsEverything() {
        REDIS.node(0).kill9();
        REDIS.node(1).pause();
        REDIS.node(1).partition();

        REDIS.resetFaults();

        for (ServerNode node : REDIS.nodes()) {
            assertThat(node.isRunning()).isTrue();
            assertThat(node.proxy().mode()).isEqualTo(TcpProxy.Mode.PASS);
            assertThat(Resp.ping(node.proxiedEndpoint(), LONG)).as(node.name()).isTrue();
        }
    }
}
