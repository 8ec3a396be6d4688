package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A locker that logs in with a password holds one of etcd's simple tokens, which expires once unused for the members'
 * {@code --auth-token-ttl} (300 s by default; 1 s here): a lease's keep-alives do not count as use, so a locker idle
 * that long, or holding one lock that long, sent its next request with a stale token, and etcd refused it ("invalid
 * auth token"; so does a member restarted since the token was issued: a rolling upgrade). jetcd asks for a new token
 * once it has seen the refusal; the request itself is sent again with it ({@link EtcdFailures#isStaleToken}). Before,
 * the first lock, release or wait's re-check after such an idle time or restart failed with a {@code
 * LockBackendException}.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdAuthTokenTest {

    private static final String PREFIX = "/token";
    private static final SecuredEtcd SECURED = SecuredEtcd.create("token", s -> s.withAuthTokenTtl(1));

    @RegisterExtension
    static final EtcdCluster ETCD = SECURED.etcd;

    /** Three token lifetimes and more: etcd drops expired tokens on a one-second tick. */
    private static final Duration PAST_THE_TOKEN = TestTimeouts.scaled(Duration.ofSeconds(3));

    private static Client root;

    @BeforeAll
    static void users() {
        SECURED.addLocker(PREFIX);
        root = SECURED.rootClient();
    }

    @AfterAll
    static void closeRoot() {
        root.close();
    }

    private static RemoteLocker locker(EtcdLockMode mode) {
        return RemoteLockers.builder()
                .uri(SECURED.lockerUri(PREFIX, mode))
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(3)))
                .build();
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lock_afterTheTokenExpired_isGranted_andAHoldOutlivingItsTokenIsReleased(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("idle");
        try (RemoteLocker locker = locker(mode)) {
            locker.tryLock(key).orElseThrow().release();
            Thread.sleep(PAST_THE_TOKEN.toMillis());
            RemoteLock held = locker.tryLock(key).orElseThrow();
            Thread.sleep(PAST_THE_TOKEN.toMillis());
            assertThat(held.isHeld()).isTrue();
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        }
        assertThat(SECURED.keysUnder(root, PREFIX)).isEmpty();
    }

    @Test
    void lock_afterTheMemberRestarted_isGranted() throws Exception {
        String key = EtcdTesting.unique("restarted");
        try (RemoteLocker locker = locker(EtcdLockMode.FAIR)) {
            locker.tryLock(key).orElseThrow().release();
            ETCD.member(0).restart(); // its tokens were in its memory
            RemoteLock held = locker.lock(key, TestTimeouts.scaled(Duration.ofSeconds(10)));
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        }
    }

    @Test
    void waiter_parkedPastItsTokensExpiry_getsTheLockWhenItIsReleased() throws Exception {
        String key = EtcdTesting.unique("parked");
        try (RemoteLocker holder = locker(EtcdLockMode.FAIR);
                RemoteLocker waiter = locker(EtcdLockMode.FAIR)) {
            RemoteLock held = holder.tryLock(key).orElseThrow();
            CompletableFuture<RemoteLock> waiting = waiter.lockAsync(key, TestTimeouts.scaled(Duration.ofSeconds(30)));
            Thread.sleep(PAST_THE_TOKEN.toMillis());
            assertThat(waiting).isNotDone();
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
            RemoteLock granted =
                    waiting.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(granted.release()).isEqualTo(ReleaseResult.RELEASED);
        }
        assertThat(SECURED.keysUnder(root, PREFIX)).isEmpty();
    }
}
