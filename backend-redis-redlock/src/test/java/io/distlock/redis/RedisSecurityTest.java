package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockState;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Opening a locker on a secured Redis (TLS only, client certificates required, ACL users) with good and bad
 * credentials and certificates: each bad input fails opening with an exception that names the cause, within the
 * connect timeout, with no secret in it and nothing left in the store.
 */
class RedisSecurityTest {

    static final TestPki PKI = SecuredRedis.pki("redis-security");

    @RegisterExtension
    static final RedisServers REDIS = SecuredRedis.servers(PKI, 1);

    private static final Duration CONNECT_TIMEOUT = TestTimeouts.scaled(Duration.ofSeconds(3));
    /** What a refusal may take beyond the connect timeout: closing the clients. */
    private static final Duration CLOSE_SLACK = TestTimeouts.scaled(Duration.ofSeconds(2));

    /** The longest a grant of the read-write lock test is waited for. */
    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(10));

    private static RedisProbe probe;
    private static TestPki.Identity client;

    @BeforeAll
    static void start() {
        probe = SecuredRedis.probe(REDIS, PKI);
        client = PKI.client(SecuredRedis.LOCKER);
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    private static String endpoint() {
        return REDIS.endpoints().get(0);
    }

    /** {@code rediss://} with the run's authority and a client certificate; credentials still to give. */
    private static RedisLockOptions tls() {
        return RedisLockOptions.create().caFile(PKI.caFile()).clientCertificate(client.certFile(), client.keyFile());
    }

    /** The locker's credentials, trusting {@code caFile}; no client certificate yet. */
    private static RedisLockOptions locker(Path caFile) {
        return RedisLockOptions.create()
                .caFile(caFile)
                .user(SecuredRedis.LOCKER)
                .password(SecuredRedis.LOCKER_PASSWORD);
    }

    private static RemoteLockerBuilder builder(String uri, RedisLockOptions options) {
        return options.applyTo(RemoteLockers.builder().uri(uri).connectTimeout(CONNECT_TIMEOUT));
    }

    /** Opening fails within the connect timeout, without a password in what is thrown, and leaves no key. */
    private static Throwable refused(String uri, RedisLockOptions options) {
        long start = System.nanoTime();
        Throwable thrown = catchThrowable(() -> builder(uri, options).build().close());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(thrown).as("opening " + uri + " with " + options).isNotNull();
        assertThat(took).isLessThan(CONNECT_TIMEOUT.plus(CLOSE_SLACK));
        for (String secret : new String[] {SecuredRedis.LOCKER_PASSWORD, SecuredRedis.STRANGER_PASSWORD}) {
            assertThat(thrown.getMessage()).doesNotContain(secret);
            assertThat(thrown.toString()).doesNotContain(secret);
        }
        assertThat(probe.keys("")).as("keys left in the store").isEmpty();
        return thrown;
    }

    @Test
    void open_aclUserOverTls_locksAndShowsNoSecret() {
        RedisLockOptions options = tls().user(SecuredRedis.LOCKER).password(SecuredRedis.LOCKER_PASSWORD);
        assertThat(options.toString())
                .doesNotContain(SecuredRedis.LOCKER_PASSWORD)
                .contains("password=****");
        try (RemoteLocker locker = builder("rediss://" + endpoint(), options).build()) {
            assertThat(locker.toString()).doesNotContain(SecuredRedis.LOCKER_PASSWORD);
            Optional<RemoteLock> lock = locker.tryLock("secured");
            assertThat(lock).isPresent();
            assertThat(probe.keys("distlock:secured")).hasSize(1);
            lock.get().close();
        }
        assertThat(probe.keys("")).isEmpty();
    }

    /**
     * production.md's rules for the locker cover read-write locks and semaphores too: an ACL user with exactly them
     * shares the read side, takes a permit, and waits for the write side behind a reader, which marks the lock (a
     * reader is refused meanwhile), is granted at the reader's release and leaves nothing.
     */
    @Test
    void readWriteLockAndSemaphore_byAnAclUserWithTheLockersCommands_work_aWaitingWriterMarksTheLock()
            throws Exception {
        RedisLockOptions options = tls().user(SecuredRedis.LOCKER).password(SecuredRedis.LOCKER_PASSWORD);
        try (RemoteLocker locker = builder("rediss://" + endpoint(), options).build();
                RemoteLocker other = builder("rediss://" + endpoint(), options).build();
                RemoteLocker third = builder("rediss://" + endpoint(), options).build()) {
            try (RemoteLock permit = locker.semaphore("secured-sem", 2).lock(WAIT)) {
                assertThat(permit.isHeld()).isTrue();
            }
            RemoteLock read = locker.readWriteLock("secured-rw").readLock().lock(WAIT);
            CompletableFuture<RemoteLock> write =
                    other.readWriteLock("secured-rw").writeLock().lockAsync(WAIT);
            long end = System.nanoTime() + WAIT.toNanos();
            Optional<RemoteLock> overtaking;
            do { // until the waiting writer's mark holds a second reader back
                overtaking = third.readWriteLock("secured-rw").readLock().tryLock();
                overtaking.ifPresent(RemoteLock::close);
            } while (overtaking.isPresent() && System.nanoTime() < end);
            assertThat(overtaking).as("a second reader beside a waiting writer").isEmpty();
            read.close();
            write.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).close();
        }
        assertThat(probe.keys("")).as("keys left in the store").isEmpty();
    }

    /**
     * What production.md lists for inspection: an ACL user with the locker's commands and the inspection's reads a
     * holder, lists it and breaks it; the locker's commands alone are refused by the server, and the refusal says so.
     */
    @Test
    void inspection_byAnAclUserWithTheInspectionCommands_readsListsAndBreaks_theLockersAloneDoNot() {
        RedisLockOptions operator = tls().user(SecuredRedis.OPERATOR).password(SecuredRedis.OPERATOR_PASSWORD);
        RedisLockOptions locker = tls().user(SecuredRedis.LOCKER).password(SecuredRedis.LOCKER_PASSWORD);
        try (RemoteLocker holder = builder("rediss://" + endpoint(), locker)
                        .ownerLabel("holder")
                        .build();
                RemoteLocker operating =
                        builder("rediss://" + endpoint(), operator).build();
                RemoteLocker lockerOnly =
                        builder("rediss://" + endpoint(), locker).build()) {
            RemoteLock held = holder.tryLock("inspected").orElseThrow();

            assertThat(operating.inspect("inspected").holders())
                    .singleElement()
                    .satisfies(h -> assertThat(h.ownerLabel()).isEqualTo("holder"));
            assertThat(operating.listHeld()).extracting(LockState::key).contains("inspected");
            Throwable refused = catchThrowable(() -> lockerOnly.inspect("inspected"));
            assertThat(refused).as("inspection by the locker's commands alone").isNotNull();
            assertThat(refused.toString()).contains("permission denied").contains("TYPE, PTTL and ZRANGEBYSCORE");
            assertThat(operating.breakLock("inspected")).hasSize(1);
            assertThat(probe.keys("distlock:inspected")).isEmpty();
            held.release();
        }
    }

    /**
     * What production.md lists for release requests: a holder whose user has {@code HGET} and {@code HDEL} hears a
     * request of a user with {@code HGET} and {@code HSET}; a holder whose user has the locker's commands alone is
     * asked all the same, renews on and keeps its lock, and hears nothing; a requester with the locker's and the
     * inspection's commands alone is refused, naming them.
     */
    @Test
    void requestRelease_byAnAclUserWithTheRequestCommands_reachesAHolderThatMayReadThem_theLockerKeepsRenewing()
            throws Exception {
        RedisLockOptions operator = tls().user(SecuredRedis.OPERATOR).password(SecuredRedis.OPERATOR_PASSWORD);
        RedisLockOptions locker = tls().user(SecuredRedis.LOCKER).password(SecuredRedis.LOCKER_PASSWORD);
        Duration lease = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker hearing = builder("rediss://" + endpoint(), operator)
                        .leaseTime(lease)
                        .build();
                RemoteLocker deaf = builder("rediss://" + endpoint(), locker)
                        .leaseTime(lease)
                        .build();
                RemoteLocker asking =
                        builder("rediss://" + endpoint(), operator).build();
                RemoteLocker lockerOnly =
                        builder("rediss://" + endpoint(), locker).build()) {
            BlockingQueue<RemoteLock> heard = new LinkedBlockingQueue<>();
            RemoteLock listening = hearing.tryLock("asked").orElseThrow();
            listening.onReleaseRequested(heard::add);
            RemoteLock notListening = deaf.tryLock("asked-deaf").orElseThrow();
            notListening.onReleaseRequested(heard::add);

            assertThat(asking.requestRelease("asked")).hasSize(1);
            assertThat(heard.poll(
                            lease.dividedBy(3)
                                    .plus(TestTimeouts.scaled(Duration.ofSeconds(1)))
                                    .toMillis(),
                            TimeUnit.MILLISECONDS))
                    .as("the holder whose user may read requests hears one within a renewal")
                    .isSameAs(listening);

            assertThat(asking.requestRelease("asked-deaf")).hasSize(1);
            Thread.sleep(lease.toMillis()); // three renewals
            assertThat(heard).as("a holder whose user lacks HGET hears nothing").isEmpty();
            assertThat(notListening.isHeld()).as("and renews on").isTrue();

            Throwable refused = catchThrowable(() -> lockerOnly.requestRelease("asked"));
            assertThat(refused).as("a request by the locker's commands alone").isNotNull();
            assertThat(refused.toString()).contains("permission denied").contains("HGET and HSET");
            listening.release();
            notListening.release();
        }
    }

    @Test
    void open_wrongPassword_failsWithAuthenticationFailed() {
        Throwable e = refused(
                "rediss://" + endpoint(), tls().user(SecuredRedis.LOCKER).password(SecuredRedis.STRANGER_PASSWORD));
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("authentication failed");
    }

    @Test
    void open_unknownUser_failsWithAuthenticationFailed() {
        Throwable e = refused("rediss://" + endpoint(), tls().user("nobody").password(SecuredRedis.LOCKER_PASSWORD));
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("authentication failed");
    }

    @Test
    void open_noCredentials_failsWithAuthenticationFailed() {
        Throwable e = refused("rediss://" + endpoint(), tls());
        assertThat(e)
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("authentication failed")
                .hasMessageContaining("'password'");
    }

    @Test
    void open_userWithoutPermissionOnPrefix_failsWithPermissionDenied() {
        Throwable e = refused(
                "rediss://" + endpoint(), tls().user(SecuredRedis.STRANGER).password(SecuredRedis.STRANGER_PASSWORD));
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("permission denied on distlock:*");
    }

    @Test
    void open_serverCertificateOfAnotherAuthority_failsWithCertificateNotTrusted() {
        TestPki stranger = SecuredRedis.pki("stranger");
        RedisLockOptions options = locker(stranger.caFile()).clientCertificate(client.certFile(), client.keyFile());
        Throwable e = refused("rediss://" + endpoint(), options);
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("certificate not trusted");
    }

    @Test
    void open_withoutClientCertificate_isRefusedByTheServer() {
        Throwable e = refused("rediss://" + endpoint(), locker(PKI.caFile()));
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("client certificate");
    }

    @Test
    void open_plaintextAgainstTlsPort_failsNamingTls() {
        Throwable e = refused(
                "redis://" + endpoint(),
                RedisLockOptions.create().user(SecuredRedis.LOCKER).password(SecuredRedis.LOCKER_PASSWORD));
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("rediss://");
    }

    @Test
    void open_missingKeyFile_failsNamingTheOptionAndFile() {
        Path missing = client.keyFile().resolveSibling("no-such-key.pem");
        Throwable e =
                refused("rediss://" + endpoint(), locker(PKI.caFile()).clientCertificate(client.certFile(), missing));
        assertThat(e)
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("keyFile")
                .hasMessageContaining(missing.toString());
    }

    @Test
    void open_userWithoutPassword_isRejectedBeforeConnecting() {
        Throwable e = refused("rediss://" + endpoint(), tls().user(SecuredRedis.LOCKER));
        assertThat(e).isInstanceOf(LockConfigurationException.class).hasMessageContaining("needs a password");
    }
}
