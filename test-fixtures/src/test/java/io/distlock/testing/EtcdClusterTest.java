package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.Deadlines;
import java.io.IOException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Three local etcd members, driven through the HTTP/JSON gateway. */
@Timeout(120)
class EtcdClusterTest {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();

    private static final Duration SHORT = Duration.ofMillis(500);
    private static final Duration LONG = Duration.ofSeconds(10);

    private static String url(int member) {
        return ETCD.clientEndpoints().get(member);
    }

    private static String proxiedUrl(int member) {
        return ETCD.proxiedClientEndpoints().get(member);
    }

    @Test
    void start_formsOneReplicatedCluster() throws Exception {
        assertThat(ETCD.source()).isEqualTo(ServerSource.LOCAL_BINARY);
        assertThat(ETCD.clientEndpoints()).hasSize(3).allMatch(u -> u.startsWith("http://127.0.0.1:"));

        EtcdHttp.put(url(0), "replicated", "yes", LONG);

        assertThat(EtcdHttp.get(url(2), "replicated", LONG)).hasValue("yes");
        assertThat(EtcdHttp.get(proxiedUrl(1), "replicated", LONG)).hasValue("yes");
    }

    @Test
    void kill9_ofOneMember_leavesMajorityServing_andRestartRejoins() throws Exception {
        ServerNode victim = ETCD.member(0);

        victim.kill9();

        assertThat(victim.isRunning()).isFalse();
        assertThat(EtcdCluster.healthy(victim.endpoint())).isFalse();
        putEventually(url(1), "written-while-down", "1");
        assertThat(EtcdHttp.get(url(2), "written-while-down", LONG)).hasValue("1");

        victim.restart();

        assertThat(EtcdCluster.healthy(victim.endpoint())).isTrue();
        Deadlines.await(
                () -> readQuietly(url(0), "written-while-down").equals("1"),
                LONG,
                () -> "restarted member did not catch up");
    }

    @Test
    void kill9_ofTwoMembers_losesQuorum() throws Exception {
        ETCD.member(1).kill9();
        ETCD.member(2).kill9();

        assertThatThrownBy(() -> EtcdHttp.put(url(0), "no-quorum", "x", Duration.ofSeconds(1)))
                .isInstanceOfAny(IOException.class);

        ETCD.resetFaults();
        putEventually(url(0), "quorum-back", "x");
        assertThat(EtcdHttp.get(url(2), "quorum-back", LONG)).hasValue("x");
    }

    @Test
    void partition_timesOutProxiedClients_andHealRestoresThem() throws Exception {
        ServerNode member = ETCD.member(1);
        EtcdHttp.put(proxiedUrl(1), "before-partition", "1", LONG);

        member.partition();

        assertThatThrownBy(() -> EtcdHttp.get(proxiedUrl(1), "before-partition", SHORT))
                .isInstanceOf(HttpTimeoutException.class);
        assertThat(EtcdHttp.get(url(1), "before-partition", LONG))
                .as("direct clients are not partitioned")
                .hasValue("1");

        member.heal();

        assertThat(EtcdHttp.get(proxiedUrl(1), "before-partition", LONG)).hasValue("1");
    }

    @Test
    void pause_silencesMember_andResumeRestoresIt() throws Exception {
        ServerNode member = ETCD.member(2);

        member.pause();

        assertThatThrownBy(() -> EtcdHttp.get(url(2), "anything", SHORT)).isInstanceOf(HttpTimeoutException.class);
        putEventually(url(0), "while-paused", "p");

        member.resume();

        Deadlines.await(
                () -> readQuietly(url(2), "while-paused").equals("p"), LONG, () -> "resumed member did not catch up");
    }

    @Test
    void stop_isGraceful_andRestartKeepsData() throws Exception {
        ServerNode member = ETCD.member(2);
        EtcdHttp.put(url(0), "durable", "d", LONG);
        Deadlines.await(() -> readQuietly(url(2), "durable").equals("d"), LONG, () -> "not replicated");

        member.stop();
        assertThat(member.isRunning()).isFalse();
        member.restart();

        assertThat(EtcdHttp.get(url(2), "durable", LONG)).hasValue("d");
    }

    /**
     * Puts, retrying as real clients do: a request that reaches a member while it has no leader (an election after
     * a fault) is dropped and times out on the server side.
     */
    private static void putEventually(String url, String key, String value) {
        Deadlines.await(
                () -> {
                    try {
                        EtcdHttp.put(url, key, value, Duration.ofSeconds(2));
                        return true;
                    } catch (IOException e) {
                        return false;
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return false;
                    }
                },
                LONG,
                () -> "no successful put of " + key + " via " + url);
    }

    private static String readQuietly(String url, String key) {
        try {
            return EtcdHttp.get(url, key, SHORT).orElse("");
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
