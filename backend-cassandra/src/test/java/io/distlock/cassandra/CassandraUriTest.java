package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.internal.core.metadata.DefaultEndPoint;
import com.datastax.oss.driver.internal.core.metadata.SniEndPoint;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** URIs and options, checked before anything connects (no server needed). */
class CassandraUriTest {

    @Test
    void timeService_ofAnotherStoresUri_isRefusedNamingTheScheme_withItsSecretHidden() {
        assertThatThrownBy(() -> TimeService.start("redis://u:s3cret@h:6379/x?password=s3cret"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("scheme 'redis'")
                .hasMessageContaining("cassandra://")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> TimeService.start("h:9042/x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("scheme 'h'");
        assertThatThrownBy(() -> TimeService.start("cassandra://h:9042/x y"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("malformed");
    }

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
    void open_badOptionValues_areNamedAsTheyWereTyped() {
        // Durations as the options take them (not PT1S), a refused value shown short and on one line.
        assertThatThrownBy(() -> RemoteLockers.open("cassandra://127.0.0.1:1/ks?pollMin=1s&pollMax=10ms"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessage("Option 'pollMax' (10ms) must not be shorter than 'pollMin' (1s)");
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri("cassandra://127.0.0.1:1/ks")
                        .option("algorithm", "fifo\n" + "x".repeat(100_000))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessage("Option 'algorithm' must be queue or legacy, got 'fifo\\u000a" + "x".repeat(35) + "...'");
    }

    @Test
    void open_unreachable_failsWithinConnectTimeoutNamingTheHosts() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.open("cassandra://127.0.0.1:1/ks?connectTimeout=2s"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:1");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    }

    /** A port that takes connections and never answers: the opening gives up at connectTimeout, named as typed. */
    @Test
    void open_silentPort_failsAtConnectTimeout_namingItAsTyped() throws IOException {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> RemoteLockers.open(
                            "cassandra://127.0.0.1:" + silent.getLocalPort() + "/ks?connectTimeout=1500ms"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("127.0.0.1:" + silent.getLocalPort())
                    .hasMessageContaining("within 1500ms (option connectTimeout)");
        }
    }

    @Test
    void open_keyRetentionNotBeyondTheLeaseTtlPlusConnectTimeout_failsNamingTheFloor() {
        // ttl 30s is written with TTL 31s; plus connectTimeout 30s: a retention must be longer than 61s.
        assertThatThrownBy(() ->
                        RemoteLockers.open("cassandra://127.0.0.1:1/ks?connectTimeout=30s&ttl=30s&keyRetention=61s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Option 'keyRetention' (1m1s)")
                .hasMessageContaining("31s")
                .hasMessageContaining("give more than 1m1s");
    }

    @Test
    void settings_keyRetention_setsTheMarkTtlAndTheNewTablesGcGrace_elseTheTableDecides() {
        CassandraSettings byDefault = settings("");
        assertThat(byDefault.markTtlSeconds(864_000)).isEqualTo(864_000);
        assertThat(byDefault.markTtlSeconds(3_600)).isEqualTo(3_600);
        assertThat(byDefault.newTablesGcGraceSeconds()).isEqualTo(86_400);
        // A table keeping tombstones for less than the floor: the mark still outlives the cells.
        assertThat(byDefault.markTtlSeconds(0)).isEqualTo(31 + 10 + 1);

        CassandraSettings explicit = settings("keyRetention=2h");
        assertThat(explicit.markTtlSeconds(864_000)).isEqualTo(7_200);
        assertThat(explicit.newTablesGcGraceSeconds()).isEqualTo(7_200);
        assertThat(CassandraLockOptions.create()
                        .keyRetention(Duration.ofHours(2))
                        .toMap())
                .containsEntry("keyRetention", "7200000ms");
    }

    @Test
    void createTable_tablesWithDeletes_keepTombstonesForTheRetention_othersAsCassandraDoes() {
        for (int i = 0; i < CassandraStatements.TABLES.size(); i++) {
            String table = CassandraStatements.TABLES.get(i);
            String cql = CassandraStatements.createTable(i, "ks", 3_600);
            if (table.equals(CassandraStatements.TIME_TABLE)
                    || table.equals(CassandraStatements.FENCE_TABLE)
                    || table.equals(CassandraStatements.RELEASE_TABLE)) {
                assertThat(cql).doesNotContain("gc_grace_seconds");
            } else {
                assertThat(cql)
                        .startsWith("CREATE TABLE IF NOT EXISTS ks." + table)
                        .endsWith(" WITH gc_grace_seconds = 3600");
            }
        }
    }

    /** The settings of a locker with lease 30s and connectTimeout 10s and {@code options}. */
    private static CassandraSettings settings(String options) {
        java.util.Map<String, String> map = new java.util.LinkedHashMap<>();
        if (!options.isEmpty()) {
            map.put(options.substring(0, options.indexOf('=')), options.substring(options.indexOf('=') + 1));
        }
        return CassandraSettings.read(new io.distlock.spi.BackendConfig(
                URI.create("cassandra://h/ks"),
                map,
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                io.distlock.Ticker.system(),
                java.time.Clock.systemUTC()));
    }

    /**
     * With a lock-delay a grant's cells live the lease plus the delay: the retention's floor counts it (lease 30 s,
     * delay 60 s, connectTimeout 10 s: TTL 91 s, floor 101 s), and the held TTL is rounded up like the lease's.
     */
    @Test
    void keyRetention_withALockDelay_mustOutliveTheLeasePlusTheDelay() {
        java.util.function.Function<String, io.distlock.spi.BackendConfig> config =
                retention -> new io.distlock.spi.BackendConfig(
                        URI.create("cassandra://h/ks"),
                        retention.isEmpty() ? java.util.Map.of() : java.util.Map.of("keyRetention", retention),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(60),
                        io.distlock.Ticker.system(),
                        java.time.Clock.systemUTC());
        assertThatThrownBy(() -> CassandraSettings.read(config.apply("100s")))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("91s")
                .hasMessageContaining("lockDelay 1m")
                .hasMessageContaining("give more than 1m41s");
        assertThat(CassandraSettings.read(config.apply("102s")).markTtlSeconds(864_000))
                .isEqualTo(102);
        assertThat(CassandraSettings.read(config.apply("")).markTtlSeconds(0)).isEqualTo(91 + 10 + 1);
        assertThat(Ttl.held(Duration.ofMillis(1500), Duration.ofMillis(1600))).isEqualTo(5);
        assertThat(Ttl.held(Duration.ofSeconds(2), Duration.ZERO)).isEqualTo(Ttl.seconds(Duration.ofSeconds(2)));
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
                .hasMessage("Option 'clockDrift' (15s) must be shorter than half the lease (30s)");
    }

    @Test
    void options_typedBuilder_neverShowsThePassword() {
        CassandraLockOptions options = CassandraLockOptions.create().credentials("locker", "s3cret-value");
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
        assertThat(CassandraLockOptions.create()
                        .algorithm(CassandraLockOptions.Algorithm.LEGACY)
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
