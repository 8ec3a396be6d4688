package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.LockBackendException;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.EtcdSecurity;
import io.distlock.testing.ServerNode;
import io.distlock.testing.TestPki;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A locker that speaks TLS to a plaintext member, or plaintext to a TLS one, is misconfigured: no wait mends it, so
 * opening fails at once, long before {@code connectTimeout}, saying which side speaks TLS.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdTlsMismatchTest {

    private static final TestPki PKI = TestPki.create(SecuredEtcd.dir("mismatch"));

    @RegisterExtension
    static final EtcdCluster PLAIN = EtcdCluster.builder().build();

    @RegisterExtension
    static final EtcdCluster TLS =
            EtcdCluster.builder().security(EtcdSecurity.tls(PKI)).build();

    /** Far longer than a refusal may take: the test fails if opening waits for it. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /** A refusal must come within this: a few round trips and a handshake, scaled for slow machines. */
    private static final Duration AT_ONCE = TestTimeouts.scaled(Duration.ofSeconds(3));

    /**
     * Each member works with the client that speaks its protocol (etcd asks a TLS client for a certificate of the
     * authority it trusts), and each mismatch is refused once, well before {@code connectTimeout}: this pays the
     * start-up of the client and of the refusal's path (loading gRPC, Netty, the TLS provider and the probe's own
     * handshake: 2-3 s on a busy machine) before the timed tests, which time a refusal, not a JVM's first use of TLS.
     */
    @BeforeAll
    static void eachMemberWorksWithItsProtocol_andEachMismatchIsRefused() {
        RemoteLockers.builder()
                .uri("etcd://" + endpoints(PLAIN) + "/mismatch")
                .build()
                .close();
        RemoteLockers.builder()
                .uri("etcd+https://" + endpoints(TLS) + "/mismatch?caFile=" + PKI.caFile() + "&certFile="
                        + PKI.client("locker").certFile() + "&keyFile="
                        + PKI.client("locker").keyFile())
                .build()
                .close();
        assertRefusedWithin(tlsToPlaintext(), CONNECT_TIMEOUT.dividedBy(2));
        assertRefusedWithin(plaintextToTls(), CONNECT_TIMEOUT.dividedBy(2));
    }

    @Test
    void open_tlsAgainstPlaintextMember_failsAtOnceNamingPlaintext() {
        assertRefusedWithin(tlsToPlaintext(), AT_ONCE)
                .hasMessageContaining("does not speak TLS")
                .hasMessageContaining("etcd://");
    }

    @Test
    void open_plaintextAgainstTlsMember_failsAtOnceNamingTls() {
        assertRefusedWithin(plaintextToTls(), AT_ONCE)
                .hasMessageContaining("speaks TLS")
                .hasMessageContaining("etcd+https://");
    }

    private static String tlsToPlaintext() {
        return "etcd+https://" + endpoints(PLAIN) + "/mismatch?caFile=" + PKI.caFile();
    }

    private static String plaintextToTls() {
        return "etcd://" + endpoints(TLS) + "/mismatch";
    }

    private static String endpoints(EtcdCluster cluster) {
        return cluster.nodes().stream().map(ServerNode::endpoint).collect(Collectors.joining(","));
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertRefusedWithin(String uri, Duration bound) {
        long start = System.nanoTime();
        Throwable failure = catchThrowable(() -> RemoteLockers.builder()
                .uri(uri)
                .connectTimeout(CONNECT_TIMEOUT)
                .build()
                .close());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(failure).isInstanceOf(LockBackendException.class);
        assertThat(took).as("time to refuse").isLessThan(bound);
        return assertThat(failure);
    }
}
