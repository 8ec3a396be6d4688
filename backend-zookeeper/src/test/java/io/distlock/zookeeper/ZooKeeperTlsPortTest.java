package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.TestPki;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A plaintext client against ZooKeeper's TLS-only port: the server drops each connection, so opening cannot tell why
 * until it asks the server itself (which leaves that plaintext question unanswered: {@link ZkServerProbe}); it fails at
 * the connect timeout, not later (its client, which pauses up to a second between connection attempts, is
 * closed in the background), and its message points at TLS. A server of its own: ZooKeeper 3.9.3's
 * TLS port refused the next TLS clients for a few seconds after such connections.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ZooKeeperTlsPortTest {

    private static final TestPki PKI = SecuredZk.pki("zk-tls-port-pki");
    private static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(3));

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().tls(PKI).build();

    @Test
    void open_inPlaintextAgainstTheTlsPort_failsWithinConnectTimeout_namingTls() {
        String uri = "zk://" + ZK.secureConnectString() + "/plain";
        // The JVM's first build loads the locker's classes before the backend starts counting (about half a second on
        // two busy cores), no part of the connect timeout: a build refused at once loads them.
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(uri)
                        .option("noSuchOption", "x")
                        .build())
                .isInstanceOf(LockConfigurationException.class);
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(uri)
                        .option("user", SecuredZk.USER)
                        .option("password", "plain-Pa55")
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("within " + CONNECT_TIMEOUT.toSeconds() + "s")
                .hasMessageContaining("a server accepts connections but did not answer within")
                .hasMessageContaining("the port speaks TLS only (tls=true)")
                .hasMessageNotContaining("plain-Pa55");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofMillis(500))));
    }
}
