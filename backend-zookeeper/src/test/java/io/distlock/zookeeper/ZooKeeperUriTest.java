package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.FreePorts;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** URIs and opening, without a server. */
class ZooKeeperUriTest {

    private static ZkLocation parse(String uri) {
        return ZkLocation.parse(URI.create(uri));
    }

    @Test
    void open_unknownOptionAgainstAnUnreachableStore_failsAtOnce_beforeConnecting() throws Exception {
        int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        String uri = "zk://127.0.0.1:" + closedPort + "/locks?bogus=1&connectTimeout=30s";
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.open(uri))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("bogus");
        assertThat(java.time.Duration.ofNanos(System.nanoTime() - start))
                .as("reported before trying to connect, not after connectTimeout")
                .isLessThan(java.time.Duration.ofSeconds(10));
    }

    @Test
    void parse_readsHostsPortsAndBasePath() {
        assertThat(parse("zk://127.0.0.1:2181/locks")).isEqualTo(new ZkLocation("127.0.0.1:2181", "/locks"));
        assertThat(parse("zk://a:1,b:2,c:3/x/y/")).isEqualTo(new ZkLocation("a:1,b:2,c:3", "/x/y"));
        assertThat(parse("zookeeper://zk1")).isEqualTo(new ZkLocation("zk1:2181", "/distlock"));
        assertThat(parse("zk://[::1]:2182/l")).isEqualTo(new ZkLocation("[::1]:2182", "/l"));
    }

    @Test
    void open_withoutHosts_failsNamingTheProblem() {
        assertThatThrownBy(() -> RemoteLockers.open("zk:///locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("names no host");
        assertThatThrownBy(() -> RemoteLockers.open("zk:locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("names no host");
    }

    @Test
    void open_withBadPort_failsNamingIt() {
        assertThatThrownBy(() -> RemoteLockers.open("zk://127.0.0.1:99999/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("bad port '99999'");
        assertThatThrownBy(() -> RemoteLockers.open("zk://a:1,b:x/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("bad port 'x'");
        assertThatThrownBy(() -> RemoteLockers.open("zk://a:1,,b:2/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("empty host");
    }

    @Test
    void open_withReservedOrInvalidBasePath_fails() {
        assertThatThrownBy(() -> RemoteLockers.open("zk://127.0.0.1:2181/zookeeper/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("reserved");
        assertThatThrownBy(() -> RemoteLockers.open("zk://127.0.0.1:2181/a//b"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("invalid base path");
    }

    @Test
    void open_unreachableServer_failsWithinConnectTimeout_namingTheConnectString() {
        String hosts = "127.0.0.1:" + FreePorts.next();
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.open("zk://" + hosts + "/locks?connectTimeout=1s"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining(hosts)
                .hasMessageContaining("connectTimeout");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimeouts.scaled(Duration.ofSeconds(5)));
    }
}
