package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockState;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.TestPki;
import io.etcd.jetcd.Client;
import io.grpc.Status;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Opening a locker on a secured etcd (TLS only, client certificates required, authentication on): both modes work,
 * and each bad input fails at once or within {@code connectTimeout} with an exception that names the cause and never
 * the password, leaving nothing in etcd.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdSecuredConnectionTest {

    private static final String PREFIX = "/secured";
    private static final SecuredEtcd SECURED = SecuredEtcd.create("connection");

    @RegisterExtension
    static final EtcdCluster ETCD = SECURED.etcd;

    private static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(5));

    private static Client root;

    @BeforeAll
    static void users() {
        SECURED.addLocker(PREFIX);
        ETCD.addUser("stranger", "stranger-pw", "/elsewhere/");
        root = SECURED.rootClient();
    }

    @AfterAll
    static void closeRoot() {
        root.close();
    }

    private static RemoteLockerBuilder builder(String uri) {
        return RemoteLockers.builder()
                .uri(uri)
                .connectTimeout(CONNECT_TIMEOUT)
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)));
    }

    /** Options of a client that does everything right but for what a test changes. */
    private static RemoteLockerBuilder withClientCertificate(RemoteLockerBuilder builder, TestPki pki) {
        TestPki.Identity identity = pki.client(SecuredEtcd.LOCKER);
        return builder.option("caFile", SECURED.pki.caFile().toString())
                .option("certFile", identity.certFile().toString())
                .option("keyFile", identity.keyFile().toString());
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lock_overTlsWithUserAndPasswordFile_works(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("tls");
        try (RemoteLocker locker = builder(SECURED.lockerUri(PREFIX, mode)).build();
                RemoteLocker other = builder(SECURED.lockerUri(PREFIX, mode)).build()) {
            try (RemoteLock held = locker.tryLock(key).orElseThrow()) {
                assertThat(held.fencingToken()).isPresent();
                assertThat(other.tryLock(key)).isEmpty();
                assertThat(EtcdTesting.lockKeys(root, PREFIX, key, mode)).hasSize(1);
            }
            assertThat(other.tryLock(key)).isPresent().get().satisfies(RemoteLock::release);
        }
        assertThat(SECURED.keysUnder(root, PREFIX)).isEmpty();
    }

    /**
     * The locker's role, read-write on its prefix, is all inspection needs: a look-up, the listing, a release request
     * (a put on the holder's key with the holder's lease), a break.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void inspection_asTheLockerUser_readsListsAsksAndBreaks(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("inspected");
        try (RemoteLocker holder = builder(SECURED.lockerUri(PREFIX, mode))
                        .ownerLabel("holder")
                        .build();
                RemoteLocker operator = builder(SECURED.lockerUri(PREFIX, mode)).build()) {
            RemoteLock held = holder.tryLock(key).orElseThrow();
            AtomicInteger asked = new AtomicInteger();
            held.onReleaseRequested(l -> asked.incrementAndGet());

            assertThat(operator.inspect(key).holders()).singleElement().satisfies(h -> assertThat(h.ownerLabel())
                    .isEqualTo("holder"));
            assertThat(operator.listHeld()).extracting(LockState::key).contains(key);
            assertThat(operator.requestRelease(key)).hasSize(1);
            Deadlines.await(() -> asked.get() == 1, Duration.ofSeconds(5), () -> "the holder did not hear the request");
            assertThat(operator.breakLock(key)).hasSize(1);
            assertThat(EtcdTesting.lockKeys(root, PREFIX, key, mode)).isEmpty();
            held.release();
        }
    }

    @Test
    void open_withPasswordOptionAndTypedOptions_works() {
        TestPki.Identity identity = SECURED.pki.client(SecuredEtcd.LOCKER);
        RemoteLockerBuilder builder = builder(SECURED.baseUri(PREFIX));
        EtcdLockOptions.create()
                .caFile(SECURED.pki.caFile())
                .clientCertificate(identity.certFile(), identity.keyFile())
                .user(SecuredEtcd.LOCKER)
                .password(SECURED.lockerPassword)
                .applyTo(builder);
        try (RemoteLocker locker = builder.build()) {
            assertThat(locker.toString()).doesNotContain(SECURED.lockerPassword);
            locker.tryLock(EtcdTesting.unique("typed")).orElseThrow().release();
        }
    }

    @Test
    void open_withWrongPassword_failsNamingAuthentication() throws Exception {
        String wrong = "wrong-" + SECURED.lockerPassword;
        assertRefused(
                        withClientCertificate(builder(SECURED.baseUri(PREFIX)), SECURED.pki)
                                .option("user", SecuredEtcd.LOCKER)
                                .option("password", wrong),
                        wrong)
                .hasMessageContaining("authentication failed for etcd user 'locker'");
    }

    @Test
    void open_withUnknownUser_failsNamingAuthentication() throws Exception {
        assertRefused(
                        withClientCertificate(builder(SECURED.baseUri(PREFIX)), SECURED.pki)
                                .option("user", "nobody")
                                .option(
                                        "passwordFile",
                                        SECURED.passwordFile(SECURED.lockerPassword)
                                                .toString()),
                        SECURED.lockerPassword)
                .hasMessageContaining("authentication failed for etcd user 'nobody'");
    }

    @Test
    void open_withUntrustedServerCertificate_failsNamingTrust() throws Exception {
        TestPki stranger = TestPki.create(SecuredEtcd.dir("untrusted"));
        TestPki.Identity identity = SECURED.pki.client(SecuredEtcd.LOCKER);
        assertRefused(
                        builder(SECURED.baseUri(PREFIX))
                                .option("caFile", stranger.caFile().toString())
                                .option("certFile", identity.certFile().toString())
                                .option("keyFile", identity.keyFile().toString())
                                .option("user", SecuredEtcd.LOCKER)
                                .option("password", SECURED.lockerPassword),
                        SECURED.lockerPassword)
                .hasMessageContaining("certificate not trusted");
    }

    @Test
    void open_withoutClientCertificate_failsNamingIt() throws Exception {
        assertRefused(
                        builder(SECURED.baseUri(PREFIX))
                                .option("caFile", SECURED.pki.caFile().toString())
                                .option("user", SecuredEtcd.LOCKER)
                                .option("password", SECURED.lockerPassword),
                        SECURED.lockerPassword)
                .hasMessageContaining("TLS handshake failed")
                .hasMessageContaining("certFile");
    }

    @Test
    void open_plaintextAgainstTlsOnlyMember_failsWithinConnectTimeout() throws Exception {
        String plain = SECURED.baseUri(PREFIX).replace("etcd+https://", "etcd://");
        assertRefused(
                        builder(plain).option("user", SecuredEtcd.LOCKER).option("password", SECURED.lockerPassword),
                        SECURED.lockerPassword)
                .hasMessageContaining("etcd+https");
    }

    /**
     * A TLS-only member closes a plaintext client's connection unanswered, or now and then resets it: a reset seen once
     * under load ("UNAVAILABLE: io exception", "Connection reset by peer") was not taken for a closed connection, so the
     * open above waited out its connect timeout and gave the generic message without the hint.
     */
    @Test
    void protocolProbe_connectionResetByTheMember_findsThatItSpeaksTls() {
        String plain = SECURED.baseUri(PREFIX).replace("etcd+https://", "etcd://");
        ProtocolProbe probe = new ProtocolProbe(EtcdLocation.parse(URI.create(plain)), false, Duration.ofSeconds(2));
        Throwable reset = Status.UNAVAILABLE
                .withDescription("io exception")
                .withCause(new IOException("recvAddress(..) failed with error(-104): Connection reset by peer"))
                .asRuntimeException();
        assertThat(probe.mismatched(reset)).isTrue();
        assertThat(probe.found()).hasValueSatisfying(hint -> assertThat(hint).contains("etcd+https"));
    }

    @Test
    void open_withUserWithoutPermissionOnPrefix_failsNamingPrefix() throws Exception {
        assertRefused(
                        withClientCertificate(builder(SECURED.baseUri(PREFIX)), SECURED.pki)
                                .option("user", "stranger")
                                .option("password", "stranger-pw"),
                        "stranger-pw")
                .hasMessageContaining("permission denied on " + PREFIX + "/")
                .hasMessageContaining("etcd user 'stranger'");
    }

    @Test
    void open_withMissingKeyFile_failsNamingTheOption() {
        TestPki.Identity identity = SECURED.pki.client(SecuredEtcd.LOCKER);
        Path missing = identity.keyFile().resolveSibling("missing-key.pem");
        assertThatThrownBy(() -> builder(SECURED.baseUri(PREFIX))
                        .option("caFile", SECURED.pki.caFile().toString())
                        .option("certFile", identity.certFile().toString())
                        .option("keyFile", missing.toString())
                        .option("user", SecuredEtcd.LOCKER)
                        .option("password", SECURED.lockerPassword)
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyFile")
                .hasMessageContaining(missing.toString())
                .hasMessageNotContaining(SECURED.lockerPassword)
                .satisfies(e -> assertThat(e.toString()).doesNotContain(SECURED.lockerPassword));
    }

    /**
     * Opens {@code builder}, expecting a {@link LockBackendException} within the connect timeout (plus scheduling
     * slack) that does not show {@code secret}, and nothing left in etcd: no key under the prefix, no new lease.
     */
    private static AbstractThrowableAssert<?, ? extends Throwable> assertRefused(
            RemoteLockerBuilder builder, String secret) throws Exception {
        int leasesBefore = SECURED.leases();
        long start = System.nanoTime();
        Throwable failure = org.assertj.core.api.Assertions.catchThrowable(builder::build);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(failure).isInstanceOf(LockBackendException.class);
        assertThat(took).isLessThan(CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofSeconds(2))));
        assertThat(failure.toString()).doesNotContain(secret);
        for (Throwable t = failure.getCause(); t != null; t = t.getCause()) {
            assertThat(String.valueOf(t.getMessage())).doesNotContain(secret);
        }
        assertThat(SECURED.keysUnder(root, PREFIX)).isEmpty();
        assertThat(SECURED.leases()).isEqualTo(leasesBefore);
        return assertThat(failure);
    }
}
