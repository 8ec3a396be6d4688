package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.FreePorts;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** URIs, options and opening, without a server. */
class EtcdUriTest {

    private static EtcdLocation parse(String uri) {
        return EtcdLocation.parse(URI.create(uri));
    }

    @Test
    void parse_readsEndpointsAndPrefix() {
        assertThat(parse("etcd://127.0.0.1:2379/locks"))
                .isEqualTo(new EtcdLocation(List.of("http://127.0.0.1:2379"), "/locks"));
        assertThat(parse("etcd://a:1,b:2,c:3/x/y/"))
                .isEqualTo(new EtcdLocation(List.of("http://a:1", "http://b:2", "http://c:3"), "/x/y"));
        assertThat(parse("etcd://e1")).isEqualTo(new EtcdLocation(List.of("http://e1:2379"), "/distlock"));
        assertThat(parse("etcd://[::1]:2380/l")).isEqualTo(new EtcdLocation(List.of("http://[::1]:2380"), "/l"));
        assertThat(parse("etcd+https://a:1,b/x"))
                .isEqualTo(new EtcdLocation(List.of("https://a:1", "https://b:2379"), "/x"));
    }

    @Test
    void open_withTlsOptionsOnPlainSchemeWithoutTls_failsNamingThem() throws Exception {
        Path ca = Files.createTempFile("ca", ".pem");
        try {
            assertThatThrownBy(() -> RemoteLockers.open("etcd://127.0.0.1:1/x?caFile=" + ca))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("TLS is off");
            assertThatThrownBy(() -> RemoteLockers.open("etcd+https://127.0.0.1:1/x?tls=false"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("contradicts");
            assertThatThrownBy(() -> RemoteLockers.open("etcd+https://127.0.0.1:1/x?verifyHost=false"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("verifyHost=false");
            assertThatThrownBy(() -> RemoteLockers.open("etcd+https://127.0.0.1:1/x?caFile=" + ca + ".missing"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("caFile");
            // Not a certificate: named by its option, before any connection.
            assertThatThrownBy(() -> RemoteLockers.open("etcd+https://127.0.0.1:1/x?caFile=" + ca))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("Cannot use the TLS files")
                    .hasMessageContaining(ca.toString());
        } finally {
            Files.delete(ca);
        }
    }

    @Test
    void open_withUserButNoPassword_failsBeforeConnecting() {
        String secret = "s3cr3t-" + System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.open("etcd://127.0.0.1:1/x?user=locker"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("'user' and 'password'");
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("etcd://127.0.0.1:1/x")
                        .option("password", secret)
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("'user' and 'password'")
                .hasMessageNotContaining(secret);
    }

    @Test
    void options_typedSecrets_neverShown() {
        String secret = "s3cr3t-" + System.nanoTime();
        EtcdLockOptions options = EtcdLockOptions.create()
                .user("locker")
                .password(secret)
                .caFile(Path.of("/etc/ca.pem"))
                .clientCertificate(Path.of("/etc/c.pem"), Path.of("/etc/k.pem"));
        assertThat(options.toString())
                .doesNotContain(secret)
                .contains("user=locker")
                .contains("password=****");
        io.distlock.RemoteLockerBuilder builder = RemoteLockers.builder().uri("etcd://127.0.0.1:1/x");
        assertThat(options.applyTo(builder)).isSameAs(builder);
        assertThat(EtcdLockOptions.create()
                        .passwordFile(Path.of("/run/secrets/etcd"))
                        .toString())
                .contains("passwordFile=/run/secrets/etcd");
    }

    @Test
    void open_withoutHosts_failsNamingTheProblem() {
        assertThatThrownBy(() -> RemoteLockers.open("etcd:///locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("names no host");
        assertThatThrownBy(() -> RemoteLockers.open("etcd:locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("names no host");
    }

    @Test
    void open_withBadHostOrPort_failsNamingIt() {
        assertThatThrownBy(() -> RemoteLockers.open("etcd://127.0.0.1:99999/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("bad port '99999'");
        assertThatThrownBy(() -> RemoteLockers.open("etcd://a:1,b:x/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("bad port 'x'");
        assertThatThrownBy(() -> RemoteLockers.open("etcd://a:1,,b:2/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("empty host");
        assertThatThrownBy(() -> RemoteLockers.open("etcd://me@a:1/locks"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("carries credentials")
                .hasMessageContaining("'user' and 'password'");
        assertThatThrownBy(() -> RemoteLockers.open("etcd://a:1/x//y"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("empty segment");
    }

    @Test
    void open_withUnknownOrMalformedOption_failsBeforeConnecting() {
        // Nothing listens on these ports: the option error must come first, not a connect timeout.
        String uri = "etcd://127.0.0.1:" + FreePorts.next() + "/locks";
        assertThatThrownBy(() -> RemoteLockers.open(uri + "?mdoe=cas"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("mdoe")
                .hasMessageContaining("mode");
        assertThatThrownBy(() -> RemoteLockers.open(uri + "?mode=queue"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("fair or cas")
                .hasMessageContaining("queue");
        assertThatThrownBy(() -> RemoteLockers.open(uri + "?operationTimeout=soon"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("operationTimeout");
    }

    @Test
    void open_unreachableStore_failsWithinConnectTimeoutNamingEndpoints() {
        String endpoint = "127.0.0.1:" + FreePorts.next();
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("etcd://" + endpoint + "/locks")
                        .connectTimeout(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining(endpoint)
                .hasMessageContaining("connectTimeout");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TestTimeouts.scaled(Duration.ofSeconds(15)));
    }

    @Test
    void open_unreachableStore_writesDurationsAsTyped() {
        String endpoint = "127.0.0.1:" + FreePorts.next();
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("etcd://" + endpoint + "/locks")
                        .connectTimeout(Duration.ofMillis(1500))
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("within 1500ms (option connectTimeout)")
                .message()
                .doesNotContainPattern("PT[0-9]");
    }

    @Test
    void options_typed_sameAsQuery() {
        io.distlock.RemoteLockerBuilder builder = RemoteLockers.builder().uri("etcd://127.0.0.1:1/x");
        EtcdLockOptions.create()
                .mode(EtcdLockMode.CAS)
                .operationTimeout(Duration.ofSeconds(3))
                .applyTo(builder);
        assertThat(EtcdLockOptions.create()
                        .mode(EtcdLockMode.CAS)
                        .operationTimeout(Duration.ofSeconds(3))
                        .toString())
                .isEqualTo("EtcdLockOptions{mode=cas, operationTimeout=3000ms}");
        assertThatThrownBy(() -> EtcdLockOptions.create().operationTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(EtcdLockMode.parse("CAS")).isEqualTo(EtcdLockMode.CAS);
        assertThat(EtcdLockMode.parse("fair")).isEqualTo(EtcdLockMode.FAIR);
    }

    @Test
    void ttl_roundsUpToWholeSeconds() {
        assertThat(EtcdLockBackendProvider.ttlSeconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(EtcdLockBackendProvider.ttlSeconds(Duration.ofMillis(1500))).isEqualTo(2);
        assertThat(EtcdLockBackendProvider.ttlSeconds(Duration.ofSeconds(30))).isEqualTo(30);
    }

    /** The lock-delay is added to the lease's TTL in whole seconds, rounded up; none adds nothing. */
    @Test
    void lockDelay_roundsUpToWholeSeconds_andMustFitTheLease() {
        assertThat(EtcdLockBackendProvider.delaySeconds(Duration.ZERO, 30)).isZero();
        assertThat(EtcdLockBackendProvider.delaySeconds(Duration.ofNanos(1), 30))
                .isEqualTo(1);
        assertThat(EtcdLockBackendProvider.delaySeconds(Duration.ofMillis(1500), 30))
                .isEqualTo(2);
        assertThat(EtcdLockBackendProvider.delaySeconds(Duration.ofSeconds(2), 30))
                .isEqualTo(2);
        assertThatThrownBy(() -> EtcdLockBackendProvider.delaySeconds(Duration.ofSeconds(Integer.MAX_VALUE), 30))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("lockDelay");
    }

    @Test
    void keyCodec_encodesOnlySeparatorAndPercent_andRoundTrips() {
        assertThat(KeyCodec.encode("orders")).isEqualTo("orders");
        assertThat(KeyCodec.encode("orders/42")).isEqualTo("orders%2F42");
        assertThat(KeyCodec.encode("50% off")).isEqualTo("50%25 off");
        assertThat(KeyCodec.encode("счёт 42")).isEqualTo("счёт 42");
        for (String key : List.of("a", "a/b/c", "/", "%2F", "%", "счёт/ 42 %25", " ")) {
            assertThat(KeyCodec.encode(key)).doesNotContain("/");
            assertThat(KeyCodec.decode(KeyCodec.encode(key))).isEqualTo(key);
        }
        assertThat(KeyCodec.encode("a/b")).isNotEqualTo(KeyCodec.encode("a%2Fb"));
        assertThatThrownBy(() -> KeyCodec.decode("a/b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KeyCodec.decode("a%2")).isInstanceOf(IllegalArgumentException.class);
    }
}
