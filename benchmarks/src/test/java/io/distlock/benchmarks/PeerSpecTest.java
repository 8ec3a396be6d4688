package io.distlock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Peer specs taken apart, without a server. */
class PeerSpecTest {

    @Test
    void parse_hostsPathAndOptions_fillsTheDefaultPort() {
        PeerSpec peer = PeerSpec.parse("peer:curator://zk1,zk2:2182/peers?mode=fast", 2181);

        assertThat(peer.name()).isEqualTo("curator");
        assertThat(peer.hosts()).containsExactly("zk1:2181", "zk2:2182");
        assertThat(peer.path()).isEqualTo("peers");
        assertThat(peer.options()).isEqualTo(Map.of("mode", "fast"));
        assertThat(PeerSpec.parse("peer:redis-setnx://127.0.0.1", 6379).hosts()).isEqualTo(List.of("127.0.0.1:6379"));
    }

    @Test
    void parse_noHost_isRejected() {
        assertThatThrownBy(() -> PeerSpec.parse("peer:curator:///peers", 2181))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names no host");
    }

    @Test
    void parse_badHostList_isRejectedNamingTheProblem() {
        assertThatThrownBy(() -> PeerSpec.parse("peer:curator://zk1:x/peers", 2181))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("bad port 'x'");
        assertThatThrownBy(() -> PeerSpec.parse("peer:curator://zk1,,zk2", 2181))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("empty host");
    }
}
