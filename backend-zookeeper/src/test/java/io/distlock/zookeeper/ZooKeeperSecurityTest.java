package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.TestPki;
import io.distlock.testing.ZooKeeperEnsemble;
import io.distlock.toolkit.TlsSettings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Digest logins, lock node ACLs and TLS against a server with a TLS-only port: what a secured locker can do, what
 * another client cannot, and each bad input failing at opening, naming its cause, within the connect timeout, leaving
 * nothing in the store and showing no password.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ZooKeeperSecurityTest {

    private static final String PASSWORD = "s3cret-Pa55";
    private static final String BASE = "/secured";
    private static final TestPki PKI = SecuredZk.pki("zk-security-pki");
    /**
     * Long enough for a first TLS connection on a busy machine (the server's TLS port sometimes answers a new client
     * only after several attempts under load); the bad inputs here fail well before it, at the handshake or the
     * check of the base path.
     */
    private static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(15));

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().tls(PKI).build();

    /** A client without credentials on the plaintext port: READ is all it gets on the lock nodes. */
    private static CuratorFramework stranger;

    @BeforeAll
    static void connect() throws Exception {
        stranger = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100));
        stranger.start();
        stranger.blockUntilConnected();
        // the owner's first opening creates the base path, with its ACL
        securedLocker(PASSWORD).build().close();
    }

    @AfterAll
    static void disconnect() {
        stranger.close();
    }

    private static String secureUri(String extra) {
        return "zk://" + ZK.secureConnectString() + BASE + "?" + SecuredZk.tlsOptions(PKI) + extra;
    }

    private static RemoteLockerBuilder securedLocker(String password) {
        return RemoteLockers.builder()
                .uri(secureUri(""))
                .option("user", SecuredZk.USER)
                .option("password", password)
                .connectTimeout(CONNECT_TIMEOUT);
    }

    private static Duration timed(Runnable action) {
        long start = System.nanoTime();
        action.run();
        return Duration.ofNanos(System.nanoTime() - start);
    }

    private static List<String> baseChildren() throws Exception {
        return stranger.getChildren().forPath(BASE);
    }

    @Test
    void lock_overTlsWithDigestLogin_createsNodesOnlyTheLockerMayDelete() throws Exception {
        try (RemoteLocker locker = securedLocker(PASSWORD).build()) {
            RemoteLock lock = locker.tryLock("acl-key").orElseThrow();
            String keyPath = ZKPaths.makePath(BASE, KeyCodec.encode("acl-key"));
            List<String> nodes = stranger.getChildren().forPath(keyPath);
            assertThat(nodes).hasSize(1);
            String node = ZKPaths.makePath(keyPath, nodes.get(0));
            for (String path : List.of(BASE, keyPath, node)) {
                // the server shows a digest id's hash to its holders only: the stranger sees the user
                List<ACL> acl = stranger.getACL().forPath(path);
                assertThat(acl)
                        .as("ACL of %s", path)
                        .extracting(a -> ZkCredentials.describe(a.getId()) + "=" + a.getPerms())
                        .containsExactly("digest:" + SecuredZk.USER + "=31", "world:anyone=1");
            }

            assertThatThrownBy(() -> stranger.delete().forPath(node))
                    .as("a client that is not the owner deletes the held lock's node")
                    .isInstanceOf(KeeperException.NoAuthException.class);

            assertThat(stranger.checkExists().forPath(node)).isNotNull();
            assertThat(lock.isHeld()).isTrue();
            try (RemoteLocker other = securedLocker(PASSWORD).build()) {
                assertThat(other.tryLock("acl-key"))
                        .as("the lock is still held")
                        .isEmpty();
            }
            lock.release();
        }
    }

    @Test
    void heldLock_nodeCanBeDeletedByTheConfiguredAdmin() throws Exception {
        String adminDigest = DigestAuthenticationProvider.generateDigest("admin:admin-pass");
        try (RemoteLocker locker = securedLocker(PASSWORD)
                        .option("adminAcl", "digest:" + adminDigest)
                        .build();
                CuratorFramework admin = CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .retryPolicy(new RetryOneTime(100))
                        .authorization("digest", "admin:admin-pass".getBytes(StandardCharsets.UTF_8))
                        .build()) {
            admin.start();
            admin.blockUntilConnected();
            RemoteLock lock = locker.tryLock("admin-key").orElseThrow();
            String keyPath = ZKPaths.makePath(BASE, KeyCodec.encode("admin-key"));
            String node = ZKPaths.makePath(
                    keyPath, admin.getChildren().forPath(keyPath).get(0));
            admin.delete().forPath(node);
            assertThat(admin.checkExists().forPath(node)).isNull();
            lock.release();
        }
    }

    @Test
    void open_withWrongPassword_failsNamingAuthentication_withoutThePassword() throws Exception {
        String wrong = "not-the-Pa55word";
        List<String> before = baseChildren();
        LockBackendException failure = (LockBackendException) org.assertj.core.api.Assertions.catchThrowable(
                () -> assertThat(timed(() -> securedLocker(wrong).build())).isLessThan(CONNECT_TIMEOUT));
        assertThat(failure)
                .isNotNull()
                .hasMessageContaining("Authentication failed")
                .hasMessageContaining("digest user '" + SecuredZk.USER + "'")
                .hasMessageContaining(BASE);
        assertThat(failure.toString()).doesNotContain(wrong).doesNotContain(PASSWORD);
        assertThat(baseChildren()).as("nothing left in the store").isSubsetOf(before);
    }

    @Test
    void open_withUnknownUser_failsNamingPermissionDenied() throws Exception {
        List<String> before = baseChildren();
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(secureUri(""))
                        .option("user", "intruder")
                        .option("password", PASSWORD)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("Permission denied on " + BASE)
                .hasMessageContaining("digest user 'intruder'")
                .hasMessageNotContaining(PASSWORD);
        assertThat(baseChildren()).as("nothing left in the store").isSubsetOf(before);
    }

    @Test
    void open_withoutCredentials_onAProtectedBasePath_failsNamingPermissionDenied() {
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(secureUri(""))
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("Permission denied on " + BASE)
                .hasMessageContaining("without credentials");
    }

    @Test
    void open_trustingAnotherAuthority_failsNamingTheUntrustedCertificate_withinConnectTimeout() {
        TestPki stranger = SecuredZk.pki("zk-untrusted-pki");
        String uri = "zk://" + ZK.secureConnectString() + BASE + "?tls=true&caFile=" + stranger.caFile();
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(uri)
                        .option("user", SecuredZk.USER)
                        .option("password", PASSWORD)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("certificate is not trusted")
                .hasMessageContaining("caFile")
                .hasMessageNotContaining(PASSWORD);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CONNECT_TIMEOUT);
    }

    @Test
    void open_withVerifyHost_andZooKeepersFipsModeOffJvmWide_refusesACertificateForAnotherName() throws Exception {
        // The JVM trusts the authority (no caFile: the JVM's trust store), and another client in it set ZooKeeper's
        // FIPS mode off for itself, JVM-wide; the server is dialled at 127.0.0.5, which its certificate does not name.
        TestPki.Identity client = PKI.client(SecuredZk.USER);
        List<String> properties = List.of(
                "zookeeper.fips-mode",
                "javax.net.ssl.trustStore",
                "javax.net.ssl.trustStorePassword",
                "javax.net.ssl.trustStoreType");
        java.util.Map<String, String> before = new java.util.HashMap<>();
        properties.forEach(p -> before.put(p, System.getProperty(p)));
        String[] hostAndPort = ZK.secureConnectString().split(":");
        try (LoopbackForwarder forwarder = new LoopbackForwarder(hostAndPort[0], Integer.parseInt(hostAndPort[1]))) {
            System.setProperty("zookeeper.fips-mode", "false");
            System.setProperty("javax.net.ssl.trustStore", PKI.trustStore().toString());
            System.setProperty("javax.net.ssl.trustStorePassword", "changeit");
            System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
            String uri = "zk://" + forwarder.endpoint() + BASE + "?tls=true&verifyHost=true&certFile="
                    + client.certFile() + "&keyFile=" + client.keyFile();
            long start = System.nanoTime();
            assertThatThrownBy(() -> RemoteLockers.builder()
                            .uri(uri)
                            .option("user", SecuredZk.USER)
                            .option("password", PASSWORD)
                            .connectTimeout(CONNECT_TIMEOUT)
                            .build()
                            .close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("certificate was refused")
                    .hasMessageContaining("127.0.0.5")
                    .hasMessageNotContaining(PASSWORD);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("refused at the handshake, not at the connect timeout")
                    .isLessThan(CONNECT_TIMEOUT);
            // What the client's own connection is set up with: Netty 4.2 checks the name by default, Netty 4.1 (what
            // ZooKeeper 3.9 is built with) only when ZooKeeper asks, in FIPS mode.
            try (ZkTls tls = ZkTls.create(TlsSettings.read(
                                    new io.distlock.spi.BackendConfig(
                                            java.net.URI.create("zk://" + forwarder.endpoint() + BASE),
                                            java.util.Map.of(
                                                    "tls",
                                                    "true",
                                                    "verifyHost",
                                                    "true",
                                                    "certFile",
                                                    client.certFile().toString(),
                                                    "keyFile",
                                                    client.keyFile().toString()),
                                            Duration.ofSeconds(30),
                                            CONNECT_TIMEOUT,
                                            io.distlock.Ticker.system(),
                                            java.time.Clock.systemUTC()),
                                    false)
                            .orElseThrow());
                    ClientX509Util x509 = new ClientX509Util()) {
                assertThat(x509.getFipsMode(tls.clientConfig())).isTrue();
                assertThat(x509.isServerHostnameVerificationEnabled(tls.clientConfig()))
                        .isTrue();
            }
        } finally {
            before.forEach((p, v) -> {
                if (v == null) {
                    System.clearProperty(p);
                } else {
                    System.setProperty(p, v);
                }
            });
        }
    }

    @Test
    void open_withUser_underAMissingSharedParent_leavesTheParentOpenToAnotherUser() throws Exception {
        String uri = "zk://" + ZK.connectString() + "/services/orders-locks";
        try (RemoteLocker locker = RemoteLockers.builder()
                        .uri(uri)
                        .option("user", SecuredZk.USER)
                        .option("password", PASSWORD)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build();
                CuratorFramework other = CuratorFrameworkFactory.builder()
                        .connectString(ZK.connectString())
                        .retryPolicy(new RetryOneTime(100))
                        .authorization("digest", "billing:billing-Pa55".getBytes(StandardCharsets.UTF_8))
                        .build()) {
            locker.tryLock("k").orElseThrow().release();
            other.start();
            other.blockUntilConnected();
            other.create().forPath("/services/billing");
            assertThat(other.checkExists().forPath("/services/billing")).isNotNull();
            assertThat(other.getACL().forPath("/services/orders-locks"))
                    .as("the base path itself is the locker's")
                    .extracting(a -> ZkCredentials.describe(a.getId()))
                    .contains("digest:" + SecuredZk.USER);
            assertThatThrownBy(() -> other.create().forPath("/services/orders-locks/intruder"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
        }
    }

    @Test
    void open_overTlsAgainstThePlaintextPort_failsAtOnce_namingTls() {
        String uri = "zk://" + ZK.connectString() + BASE + "?" + SecuredZk.tlsOptions(PKI);
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(uri)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("TLS handshake");
    }

    @Test
    void open_withMissingKeyFile_failsNamingTheOption() {
        TestPki.Identity client = PKI.client("locker");
        String uri = "zk://" + ZK.secureConnectString() + BASE + "?tls=true&caFile=" + PKI.caFile() + "&certFile="
                + client.certFile() + "&keyFile=/no/such/client.key";
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(uri)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyFile")
                .hasMessageContaining("/no/such/client.key");
    }

    @Test
    void options_userWithoutPassword_andAdminAclWithoutUser_areRefused() {
        assertThatThrownBy(() ->
                        RemoteLockers.builder().uri(secureUri("&user=locker")).build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("needs option 'password'");
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(secureUri("&adminAcl=sasl:admin"))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("needs options 'user' and 'password'");
    }

    @Test
    void credentials_showNoPassword() {
        Optional<ZkCredentials> credentials = ZkCredentials.read(new io.distlock.spi.BackendConfig(
                java.net.URI.create("zk://h/b"),
                java.util.Map.of("user", "u", "password", PASSWORD),
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                io.distlock.Ticker.system(),
                java.time.Clock.systemUTC()));
        assertThat(credentials).isPresent();
        assertThat(credentials.get().toString()).contains("'u'").doesNotContain(PASSWORD);
        assertThat(ZkCredentials.describe(credentials.get().identity())).isEqualTo("digest:u");
    }
}
