package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.internal.core.metadata.DefaultEndPoint;
import com.datastax.oss.driver.internal.core.metadata.SniEndPoint;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** URIs and options, checked before anything connects (no server needed). */
class CassandraUriTest {

    @Test
    void parse_hostsPortsAndKeyspace() {
        CassandraLocation location = CassandraLocation.parse(URI.create("cassandra://a:9142,b,c:9043/locks_1"));
        assertThat(location.keyspace()).isEqualTo("locks_1");
        assertThat(location.hosts()).isEqualTo("a:9142,b:9042,c:9043");
    }

    @Test
    void describe_ipv6Node_bracketsTheAddress_soTheLabelReadsAsHostAndPort() {
        String label = CassandraLockers.describe(List.of(
                new DefaultEndPoint(new InetSocketAddress("::1", 9042)),
                new DefaultEndPoint(new InetSocketAddress("127.0.0.1", 9043))));
        assertThat(label).isEqualTo("127.0.0.1:9043,[0:0:0:0:0:0:0:1]:9042");
    }

    @Test
    void describe_twoNodesBehindOneSniProxy_namesTheProxyOnce() {
        // Behind an SNI proxy every node's end point resolves to the proxy's address; only the server name differs.
        InetSocketAddress proxy = new InetSocketAddress("127.0.0.1", 29042);
        String label = CassandraLockers.describe(
                List.of(new SniEndPoint(proxy, "node-1.cluster"), new SniEndPoint(proxy, "node-2.cluster")));
        InetSocketAddress resolved = (InetSocketAddress) new SniEndPoint(proxy, "any").resolve();
        assertThat(label).isEqualTo(resolved.getHostString() + ":29042");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "cassandra:///ks",
                "cassandra://h:9042",
                "cassandra://h:9042/",
                "cassandra://h:0/ks",
                "cassandra://h:70000/ks",
                "cassandra://h:x/ks",
                "cassandra://h,,g/ks",
                "cassandra://h/bad-keyspace"
            })
    void open_malformedUri_failsNamingTheProblem(String uri) {
        assertThatThrownBy(() -> RemoteLockers.open(uri))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Invalid Cassandra URI");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "algorithm=fifo",
                "consistency=ONE",
                "pollMin=0ms",
                "pollMin=1s&pollMax=10ms",
                "createSchema=yes",
                "timeService=none",
                "localDatacenter=",
                "clockDrift=-1ms",
                "clockDrift=15s",
                "colour=blue",
                "user=locker",
                "password=secret",
                "user=&password=secret",
                "user=locker&password=a&passwordEnv=B",
                "user=locker&passwordFile=/no/such/file",
                "caFile=/no/such/ca.pem",
                "tls=true&keyFile=/no/such/key.pem",
                "driverConfig=/no/such/application.conf"
            })
    void open_badOption_failsBeforeConnecting(String option) {
        // Port 1 has nothing listening: a connect attempt would fail differently, and only after the timeout.
        assertThatThrownBy(() -> RemoteLockers.open("cassandra://127.0.0.1:1/ks?connectTimeout=30s&" + option))
                .isInstanceOf(LockConfigurationException.class);
    }

    @Test
    void open_unreachable_failsWithinConnectTimeoutNamingTheHosts() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.open("cassandra://127.0.0.1:1/ks?connectTimeout=2s"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:1");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void ttl_isWholeSecondsAndNeverShorterThanTheLease() {
        assertThat(Ttl.seconds(Duration.ofMillis(300))).isEqualTo(2);
        assertThat(Ttl.seconds(Duration.ofSeconds(1))).isEqualTo(2);
        assertThat(Ttl.seconds(Duration.ofMillis(1001))).isEqualTo(3);
        assertThat(Ttl.seconds(Duration.ofSeconds(30))).isEqualTo(31);
        assertThat((long) Ttl.seconds(Duration.ofDays(100_000))).isEqualTo(Ttl.MAX_TTL_SECONDS);
    }

    /** The validity is the lease less the clock-drift allowance, from before the write. */
    @Test
    void validity_isTheLeaseLessTheDriftAllowance() {
        Duration lease = Duration.ofSeconds(30);
        assertThat(LeaseValidity.byDefault().drift(lease)).isEqualTo(Duration.ofMillis(100));
        assertThat(LeaseValidity.byDefault().drift(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(30));
        assertThat(LeaseValidity.byDefault().until(1_000, lease))
                .isEqualTo(1_000 + lease.toNanos() - Duration.ofMillis(100).toNanos());
        assertThat(LeaseValidity.explicit(Duration.ofSeconds(2), lease).until(0, lease))
                .isEqualTo(Duration.ofSeconds(28).toNanos());
        assertThatThrownBy(() -> LeaseValidity.explicit(Duration.ofSeconds(15), lease))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("clockDrift");
    }

    @Test
    void options_typedBuilder_neverShowsThePassword() {
        CassandraOptions options = CassandraOptions.create().credentials("locker", "s3cret-value");
        assertThat(options.toString()).contains("locker").doesNotContain("s3cret-value");
        assertThat(options.toMap()).containsEntry("user", "locker").containsEntry("password", "s3cret-value");
    }

    @Test
    void open_badTlsOrCredentialOption_failsWithoutShowingThePassword() {
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("cassandra://127.0.0.1:1/ks?connectTimeout=30s&caFile=/no/such/ca.pem")
                        .option("user", "locker")
                        .option("password", "s3cret-value")
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("caFile")
                .satisfies(e -> assertThat(e.toString()).doesNotContain("s3cret-value"));
    }

    @Test
    void options_typedBuilder_setsTheNamedOptions() {
        assertThat(CassandraOptions.create()
                        .algorithm(CassandraOptions.Algorithm.LEGACY)
                        .fencing(true)
                        .pollInterval(Duration.ofMillis(2), Duration.ofMillis(100))
                        .embeddedTimeService(false)
                        .clockDrift(Duration.ofMillis(250))
                        .toMap())
                .containsEntry("algorithm", "legacy")
                .containsEntry("fencing", "true")
                .containsEntry("pollMin", "2ms")
                .containsEntry("pollMax", "100ms")
                .containsEntry("timeService", "external")
                .containsEntry("clockDrift", "250ms");
    }
}
