package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.TestPki;
import io.distlock.testing.ZooKeeperEnsemble;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A locker built with {@link ZooKeeperLockOptions} behaves as one given the same options in its URI. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ZooKeeperLockOptionsTest {

    private static final String PASSWORD = "opt-Pa55word";
    private static final String BASE = "/typed-options";
    /**
     * Neither the default lease time (30 s) nor a bound of the server's (1 s to its maximum): asked for, granted. (On
     * a loaded machine this in-process TLS server can turn a client's connection attempts away for seconds, the
     * client failing to read the connect response; the opening then confirms the session before it returns.)
     */
    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(10);

    private static final TestPki PKI = SecuredZk.pki("zk-options-pki");
    private static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(15));

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().tls(PKI).build();

    /** The admin of option {@code adminAcl}, on the plaintext port: reads the lock nodes' ACLs. */
    private static CuratorFramework admin;

    private static String adminId;

    @BeforeAll
    static void connect() throws Exception {
        adminId = "digest:" + DigestAuthenticationProvider.generateDigest("admin:admin-pass");
        admin = CuratorFrameworkFactory.builder()
                .connectString(ZK.connectString())
                .retryPolicy(new RetryOneTime(100))
                .authorization("digest", "admin:admin-pass".getBytes(StandardCharsets.UTF_8))
                .build();
        admin.start();
        admin.blockUntilConnected();
    }

    @AfterAll
    static void disconnect() {
        admin.close();
    }

    private static RemoteLocker byUri(CapturingProvider provider) {
        TestPki.Identity client = PKI.client(SecuredZk.USER);
        String query = "tls=true&caFile=" + PKI.caFile() + "&certFile=" + client.certFile() + "&keyFile="
                + client.keyFile() + "&verifyHost=true&user=" + SecuredZk.USER + "&password=" + PASSWORD + "&adminAcl="
                + adminId + "&sessionTimeout=" + SESSION_TIMEOUT.toMillis() + "ms&tickTime="
                + ZooKeeperEnsemble.TICK.toMillis() + "ms";
        return RemoteLockers.builder()
                .uri("zk://" + ZK.secureConnectString() + BASE + "?" + query)
                .connectTimeout(CONNECT_TIMEOUT)
                .provider(provider)
                .build();
    }

    private static RemoteLocker typed(CapturingProvider provider) {
        TestPki.Identity client = PKI.client(SecuredZk.USER);
        return ZooKeeperLockOptions.create()
                .caFile(PKI.caFile())
                .clientCertificate(client.certFile(), client.keyFile())
                .verifyHost(true)
                .user(SecuredZk.USER)
                .password(PASSWORD)
                .adminAcl(adminId)
                .sessionTimeout(SESSION_TIMEOUT)
                .tickTime(ZooKeeperEnsemble.TICK)
                .applyTo(RemoteLockers.builder()
                        .uri("zk://" + ZK.secureConnectString() + BASE)
                        .connectTimeout(CONNECT_TIMEOUT)
                        .provider(provider))
                .build();
    }

    /** The ACL of the node that holds {@code key}: each id as shown to a stranger, with its permissions. */
    private static List<String> lockNodeAcl(String key) throws Exception {
        String keyPath = ZKPaths.makePath(BASE, KeyCodec.encode(key));
        List<String> nodes = admin.getChildren().forPath(keyPath);
        assertThat(nodes).hasSize(1);
        return admin.getACL().forPath(ZKPaths.makePath(keyPath, nodes.get(0))).stream()
                .map(a -> ZkCredentials.describe(a.getId()) + "=" + a.getPerms())
                .toList();
    }

    /** What a locker's options made of it: its TLS port, its session, its tick, the ACL of its lock nodes. */
    private static List<Object> observed(Function<CapturingProvider, RemoteLocker> open, String key) throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = open.apply(provider)) {
            // the port is the servers' TLS-only secureClientPort: the locker connected over TLS, with its certificate
            try (RemoteLock lock = locker.tryLock(key).orElseThrow()) {
                assertThat(lock.validUntil())
                        .as("the session is the lease: valid for at most the session timeout asked for")
                        .isBefore(Instant.now().plus(SESSION_TIMEOUT).plusMillis(100));
                return List.of(
                        provider.opened().client().getZookeeperClient().getLastNegotiatedSessionTimeoutMs(),
                        ZooKeeperLockBackendProvider.tickTime(provider.config()),
                        lockNodeAcl(key));
            }
        }
    }

    @Test
    void typedOptions_openALocker_likeTheSameOptionsInTheUri() throws Exception {
        List<Object> fromUri = observed(ZooKeeperLockOptionsTest::byUri, "by-uri");
        // the URI's locker created the base path with its identity's ACL: the typed one must log in as the same user,
        // with the same password, to lock under it
        List<Object> fromTyped = observed(ZooKeeperLockOptionsTest::typed, "typed");

        assertThat(fromUri)
                .containsExactly(
                        (int) SESSION_TIMEOUT.toMillis(),
                        java.util.Optional.of(ZooKeeperEnsemble.TICK),
                        List.of("digest:" + SecuredZk.USER + "=31", "digest:admin=31", "world:anyone=1"));
        assertThat(fromTyped).isEqualTo(fromUri);

        try (RemoteLocker one = byUri(new CapturingProvider());
                RemoteLocker other = typed(new CapturingProvider())) {
            RemoteLock held = other.tryLock("shared").orElseThrow();
            assertThat(one.tryLock("shared"))
                    .as("the same key under the same base path")
                    .isEmpty();
            held.release();
        }
    }

    @Test
    void typedOptions_onTheApplicationsClient_areRefusedAsTheUriOptionsAre() throws Exception {
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100))) {
            client.start();
            client.blockUntilConnected();
            Throwable typed = catchThrowable(() -> ZooKeeperLockOptions.create()
                    .sessionTimeout(SESSION_TIMEOUT)
                    .user(SecuredZk.USER)
                    .password(PASSWORD)
                    .applyTo(ZooKeeperLockers.using(client, BASE))
                    .build());
            Throwable given = catchThrowable(() -> ZooKeeperLockers.using(client, BASE)
                    .option("sessionTimeout", SESSION_TIMEOUT.toMillis() + "ms")
                    .option("user", SecuredZk.USER)
                    .option("password", PASSWORD)
                    .build());
            assertThat(typed)
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("[password, sessionTimeout, user]")
                    .hasMessage(given.getMessage());
        }
    }

    @Test
    void typedOptions_aTickThatIsNotPositive_isRefusedAtOpening_asInTheUri() throws Exception {
        int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        String uri = "zk://127.0.0.1:" + closedPort + BASE;
        Throwable typed = catchThrowable(() -> ZooKeeperLockOptions.create()
                .tickTime(Duration.ZERO)
                .applyTo(RemoteLockers.builder().uri(uri))
                .build());
        Throwable given = catchThrowable(() -> RemoteLockers.open(uri + "?tickTime=0s"));
        for (Throwable failure : List.of(typed, given)) {
            assertThat(failure)
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("Option 'tickTime' must be positive");
        }
    }

    @Test
    void toString_namesTheOptions_butNotThePassword() {
        ZooKeeperLockOptions options =
                ZooKeeperLockOptions.create().user("locker").password(PASSWORD);
        assertThat(options.toString()).contains("user=locker", "password=****").doesNotContain(PASSWORD);
        RemoteLockerBuilder builder = RemoteLockers.builder();
        assertThat(options.applyTo(builder)).isSameAs(builder);
    }
}
