package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.kit.CrossProcessExclusionContract;
import io.distlock.kit.LeaseContract;
import io.distlock.kit.LockHandleContract;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.kit.ProgressContract;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.CassandraCluster;
import io.distlock.testing.TestPki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A secured Cassandra node (password logins, grants, client encryption only, client certificates required) and the
 * ways distlock reaches it: the URI with credentials and TLS options, the driver's own configuration file, and the
 * application's own session. The kit's exclusion and lease contracts and its exclusion across worker processes (`CrossProcessExclusionContract`) run over the secured URI as role
 * {@value #ROLE}, which holds SELECT and MODIFY on the keyspace and nothing else; its core contracts run through {@link
 * CassandraLockers#using}; each bad input fails with the cause named, within the connect timeout, and no message
 * carries the password.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CassandraSecuredTest {

    static final String ROLE = "locker";
    static final String STRANGER = "stranger";
    static final String PASSWORD = "pw-" + UUID.randomUUID();
    static final Path DIR = Path.of("target", "cassandra-secured").toAbsolutePath();
    static final TestPki PKI = TestPki.create(DIR.resolve("pki"));
    static final TestPki UNTRUSTED = TestPki.create(DIR.resolve("untrusted-pki"));
    static final TestPki.Identity CLIENT = PKI.client(ROLE);
    static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(10));

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().secured(PKI).build();

    static Path passwordFile;
    static Path driverConfig;
    static CqlSession admin;
    static CqlSession appSession;

    @BeforeAll
    static void rolesAndSchema() throws IOException {
        passwordFile = write("locker.password", PASSWORD + "\n");
        admin = CASSANDRA.newSession();
        String ks = CASSANDRA.keyspace();
        for (String role : new String[] {ROLE, STRANGER}) {
            admin.execute("CREATE ROLE " + role + " WITH PASSWORD = '" + PASSWORD + "' AND LOGIN = true");
        }
        admin.execute("GRANT SELECT ON KEYSPACE " + ks + " TO " + ROLE);
        admin.execute("GRANT MODIFY ON KEYSPACE " + ks + " TO " + ROLE);
        // The tables are made once by the superuser: the locker's role may not create them.
        RemoteLockers.open(uri(ks, superuser() + "&" + tls() + "&createSchema=true&connectTimeout=60s"))
                .close();
        // The application's session, configured the driver's way (its configuration file), no keyspace set.
        driverConfig = write(
                "driver.conf",
                String.join(
                        "\n",
                        "datastax-java-driver {",
                        "  basic.load-balancing-policy.local-datacenter = " + CASSANDRA.localDatacenter(),
                        "  advanced.auth-provider {",
                        "    class = PlainTextAuthProvider",
                        "    username = " + ROLE,
                        "    password = \"" + PASSWORD + "\"",
                        "  }",
                        "  advanced.ssl-engine-factory {",
                        "    class = DefaultSslEngineFactory",
                        "    hostname-validation = true",
                        "    truststore-path = \"" + PKI.trustStore() + "\"",
                        "    truststore-password = changeit",
                        "    keystore-path = \"" + CLIENT.keyStore() + "\"",
                        "    keystore-password = \"" + CLIENT.keyStorePassword() + "\"",
                        "  }",
                        "  advanced.netty.io-group.shutdown.quiet-period = 0",
                        "  advanced.netty.admin-group.shutdown.quiet-period = 0",
                        "}",
                        ""));
        appSession = CqlSession.builder()
                .addContactPoints(CASSANDRA.contactPoints())
                .withConfigLoader(DriverConfigLoader.fromPath(driverConfig))
                .build();
    }

    @AfterAll
    static void closeSessions() {
        if (appSession != null) {
            appSession.close();
        }
    }

    /** {@code cassandra://<node>/<keyspace>?localDatacenter=...&<options>}. */
    static String uri(String keyspace, String options) {
        return "cassandra://" + CASSANDRA.contactPointsString() + "/" + keyspace + "?localDatacenter="
                + CASSANDRA.localDatacenter() + "&" + options;
    }

    /** Mutual TLS with the run's authority and the locker's client certificate. */
    static String tls() {
        return "tls=true&caFile=" + PKI.caFile() + "&certFile=" + CLIENT.certFile() + "&keyFile=" + CLIENT.keyFile();
    }

    /** The locker's role, its password read from a file: the URI carries no secret. */
    static String credentials() {
        return "user=" + ROLE + "&passwordFile=" + passwordFile;
    }

    static String superuser() {
        return "user=" + CassandraCluster.SUPERUSER + "&password=" + CassandraCluster.SUPERUSER_PASSWORD;
    }

    static String secured(String more) {
        return uri(
                CASSANDRA.keyspace(),
                credentials() + "&" + tls() + "&connectTimeout=" + CONNECT_TIMEOUT.toMillis() + "ms"
                        + (more.isEmpty() ? "" : "&" + more));
    }

    /** A key no other test uses. */
    private static String key(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private static Path write(String name, String content) {
        try {
            Files.createDirectories(DIR);
            return Files.writeString(DIR.resolve(name), content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Asserts that {@code opening} fails with {@code type}, its message containing {@code cause}, within the connect
     * timeout (plus scheduling slack), and that neither its message nor its causes' carry the password.
     */
    private static void failsWithin(ThrowingCallable opening, Class<? extends Exception> type, String cause) {
        long start = System.nanoTime();
        assertThatThrownBy(opening)
                .isInstanceOf(type)
                .hasMessageContaining(cause)
                .satisfies(e -> {
                    for (Throwable t = e; t != null; t = t.getCause()) {
                        assertThat(String.valueOf(t.getMessage())).doesNotContain(PASSWORD);
                        assertThat(t.toString()).doesNotContain(PASSWORD);
                    }
                });
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isLessThan(CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofSeconds(3))));
    }

    @Test
    void open_securedUri_locksAsTheRole() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(secured(""))) {
            String key = key("secured");
            try (RemoteLock lock = locker.lock(key, Duration.ofSeconds(30))) {
                assertThat(CassandraKitHooks.entries(admin, key)).isNotEmpty();
            }
            assertThat(locker.toString()).doesNotContain(PASSWORD);
        }
    }

    @Test
    void open_passwordAsBuilderOption_isNeverShown() throws Exception {
        RemoteLockerBuilder builder = CassandraLockOptions.create()
                .credentials(ROLE, PASSWORD)
                .tls(PKI.caFile())
                .clientCertificate(CLIENT.certFile(), CLIENT.keyFile())
                .applyTo(RemoteLockers.builder().uri(uri(CASSANDRA.keyspace(), "connectTimeout=10s")));
        assertThat(CassandraLockOptions.create().credentials(ROLE, PASSWORD).toString())
                .doesNotContain(PASSWORD)
                .contains(ROLE);
        try (RemoteLocker locker = builder.build()) {
            assertThat(locker.tryLock(key("builder"))).isPresent().get().satisfies(RemoteLock::close);
            assertThat(locker.toString()).doesNotContain(PASSWORD);
        }
    }

    @Test
    void open_wrongPassword_failsAsAuthenticationFailed() {
        Path wrong = write("wrong.password", "not-" + PASSWORD);
        failsWithin(
                () -> RemoteLockers.open(uri(
                        CASSANDRA.keyspace(),
                        "user=" + ROLE + "&passwordFile=" + wrong + "&" + tls() + "&connectTimeout="
                                + CONNECT_TIMEOUT.toMillis() + "ms")),
                LockBackendException.class,
                "Authentication failed");
    }

    @Test
    void open_unknownRole_failsAsAuthenticationFailed() {
        failsWithin(
                () -> RemoteLockers.builder()
                        .uri(uri(CASSANDRA.keyspace(), "user=nobody&" + tls()))
                        .option("password", PASSWORD)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build(),
                LockBackendException.class,
                "Authentication failed");
    }

    @Test
    void open_withoutCredentials_failsAsAuthenticationRequired() {
        failsWithin(
                () -> RemoteLockers.open(uri(CASSANDRA.keyspace(), tls())),
                LockBackendException.class,
                "Authentication failed");
    }

    @Test
    void open_untrustedServerCertificate_failsAsNotTrusted() {
        failsWithin(
                () -> RemoteLockers.open(uri(
                        CASSANDRA.keyspace(),
                        credentials() + "&tls=true&caFile=" + UNTRUSTED.caFile() + "&certFile=" + CLIENT.certFile()
                                + "&keyFile=" + CLIENT.keyFile())),
                LockBackendException.class,
                "certificate not trusted");
    }

    @Test
    void open_clientCertificateOfAnotherAuthority_isRefused() {
        TestPki.Identity stranger = UNTRUSTED.client(ROLE);
        failsWithin(
                () -> RemoteLockers.open(uri(
                        CASSANDRA.keyspace(),
                        credentials() + "&tls=true&caFile=" + PKI.caFile() + "&certFile=" + stranger.certFile()
                                + "&keyFile=" + stranger.keyFile())),
                LockBackendException.class,
                "TLS handshake");
    }

    @Test
    void open_plaintextAtTheTlsOnlyPort_failsNamingTls() {
        failsWithin(
                () -> RemoteLockers.open(uri(
                        CASSANDRA.keyspace(), credentials() + "&connectTimeout=" + CONNECT_TIMEOUT.toMillis() + "ms")),
                LockBackendException.class,
                "tls=true");
    }

    @Test
    void open_missingKeyFile_failsNamingTheOption() {
        failsWithin(
                () -> RemoteLockers.open(uri(
                        CASSANDRA.keyspace(),
                        credentials() + "&tls=true&caFile=" + PKI.caFile() + "&certFile=" + CLIENT.certFile()
                                + "&keyFile=" + DIR.resolve("no-such.key"))),
                LockConfigurationException.class,
                "keyFile");
    }

    /** The server's certificate names 127.0.0.1-3 and localhost; the node's own address (behind the proxy) is not. */
    @Test
    void verifyHost_refusesACertificateThatDoesNotNameTheHost() throws Exception {
        String direct = "cassandra://" + CASSANDRA.node(0).endpoint() + "/" + CASSANDRA.keyspace() + "?localDatacenter="
                + CASSANDRA.localDatacenter() + "&" + credentials() + "&" + tls();
        failsWithin(() -> RemoteLockers.open(direct), LockBackendException.class, "does not name the host");
        try (RemoteLocker locker = RemoteLockers.open(direct + "&verifyHost=false")) {
            assertThat(locker.tryLock(key("no-host-check"))).isPresent().get().satisfies(RemoteLock::close);
        }
    }

    @Test
    void open_roleWithoutPermission_failsAsPermissionDenied() {
        failsWithin(
                () -> RemoteLockers.open(
                        uri(CASSANDRA.keyspace(), "user=" + STRANGER + "&passwordFile=" + passwordFile + "&" + tls())),
                LockBackendException.class,
                "Permission denied on keyspace '" + CASSANDRA.keyspace() + "'");
    }

    /** {@code createSchema=true} needs CREATE on the keyspace besides SELECT and MODIFY; nothing more. */
    @Test
    void createSchema_needsCreateOnTheKeyspace() throws Exception {
        String ks = CASSANDRA.keyspace() + "_new";
        admin.execute(
                "CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        try {
            admin.execute("GRANT SELECT ON KEYSPACE " + ks + " TO " + ROLE);
            admin.execute("GRANT MODIFY ON KEYSPACE " + ks + " TO " + ROLE);
            String schemaUri = uri(ks, credentials() + "&" + tls() + "&createSchema=true&connectTimeout=60s");
            assertThatThrownBy(() -> RemoteLockers.open(schemaUri))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Permission denied on keyspace '" + ks + "'")
                    .hasMessageContaining("CREATE");
            admin.execute("GRANT CREATE ON KEYSPACE " + ks + " TO " + ROLE);
            try (RemoteLocker locker = RemoteLockers.open(schemaUri)) {
                assertThat(locker.tryLock(key("schema"))).isPresent().get().satisfies(RemoteLock::close);
            }
        } finally {
            admin.execute("DROP KEYSPACE IF EXISTS " + ks);
        }
    }

    /** Whatever the driver configures is reachable: here its own authentication and TLS settings, from its file. */
    @Test
    void driverConfig_isTheDriversOwnConfiguration() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("cassandra://" + CASSANDRA.contactPointsString() + "/"
                + CASSANDRA.keyspace() + "?driverConfig=" + driverConfig)) {
            assertThat(locker.tryLock(key("driver-config"))).isPresent().get().satisfies(RemoteLock::close);
        }
    }

    @Test
    void using_closingTheLocker_leavesTheSessionOpenAndUsable() throws Exception {
        String key = key("own-session");
        try (RemoteLocker locker = CassandraLockers.using(appSession, CASSANDRA.keyspace())
                .leaseTime(Duration.ofSeconds(10))
                .build()) {
            locker.lock(key, Duration.ofSeconds(30)).close();
        }
        assertThat(appSession.isClosed()).isFalse();
        assertThat(appSession
                        .execute("SELECT release_version FROM system.local")
                        .one())
                .isNotNull();
        try (RemoteLocker again =
                CassandraLockers.using(appSession, CASSANDRA.keyspace()).build()) {
            assertThat(again.tryLock(key)).isPresent().get().satisfies(RemoteLock::close);
        }
    }

    @Test
    void using_connectionOptions_areRefused() {
        assertThatThrownBy(() -> CassandraLockers.using(appSession, CASSANDRA.keyspace())
                        .option("user", ROLE)
                        .option("tls", "true")
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("user")
                .hasMessageContaining("tls")
                .hasMessageContaining("CassandraLockers.using");
        assertThat(appSession.isClosed()).isFalse();
    }

    /** The kit's exclusion and lease contracts and its exclusion across worker processes (`CrossProcessExclusionContract`) over the secured URI, as the locker's role. */
    @Nested
    class SecuredKit
            implements MutualExclusionContract, LeaseContract, CrossProcessExclusionContract, CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return credentials() + "&" + tls();
        }
    }

    /** The kit's core contracts through the application's session (no keyspace set on it). */
    @Nested
    class OwnSessionKit implements MutualExclusionContract, ProgressContract, LockHandleContract, CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return credentials() + "&" + tls();
        }

        @Override
        public RemoteLockerBuilder lockerBuilder() {
            return CassandraLockers.using(appSession, CASSANDRA.keyspace());
        }
    }
}
