package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.TcpProxy;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lock-delay on etcd ({@link EtcdSession}): the locker's lease is granted for the TTL plus the delay, whole seconds,
 * while the holder's validity stays the TTL; a release frees the key at once, a holder cut off keeps it from the next
 * for the delay after it was told it lost it.
 */
class EtcdLockDelayTest extends OneMemberEtcdTests {

    private static final Logger log = LoggerFactory.getLogger(EtcdLockDelayTest.class);

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    /** The lease and the lock-delay of the tests whose holder's grant ends without a release. */
    private static final Duration TTL = Duration.ofSeconds(2);

    private static final Duration DELAY = Duration.ofSeconds(3);

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    private RemoteLocker delayed(String uri, EtcdLockMode mode, Duration ttl, Duration delay) {
        return RemoteLockers.builder()
                .uri(uri + "?mode=" + mode.optionValue())
                .leaseTime(ttl)
                .lockDelay(delay)
                .build();
    }

    /**
     * The holder's keep-alives stop reaching etcd (they go unanswered) while its connection works: its validity runs
     * out, it is told it lost the lock, and its session is not revoked, though etcd could be reached: the waiter is
     * granted no earlier than TTL + delay after the last keep-alive. (Revoking it, as a session without a delay is
     * revoked on its loss, granted the waiter 11-18 ms after the loss.)
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lockDelay_keepAlivesUnanswered_sessionNotRevokedOnItsLoss(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("delay-frozen");
        KeepAliveBlocker blocker = new KeepAliveBlocker();
        try (RemoteLocker holderLocker = RemoteLockers.builder()
                        .uri(EtcdTesting.uri(ETCD, PREFIX) + "?mode=" + mode.optionValue())
                        .provider(new EtcdLockBackendProvider(client -> client.interceptor(blocker)))
                        .leaseTime(TTL)
                        .lockDelay(DELAY)
                        .build();
                RemoteLocker waiterLocker = locker(mode, TTL)) {
            endUncleanly(mode, key, holderLocker, waiterLocker, () -> blocker.blocked = true, "keep-alives unanswered");
        }
    }

    /** Makes every keep-alive call go unanswered once {@link #blocked}: it never leaves the client. */
    private static final class KeepAliveBlocker implements ClientInterceptor {
        volatile boolean blocked;

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            if (!blocked || !method.getFullMethodName().endsWith("/LeaseKeepAlive")) {
                return next.newCall(method, options);
            }
            return new ClientCall<>() {
                @Override
                public void start(Listener<R> listener, Metadata headers) {}

                @Override
                public void request(int n) {}

                @Override
                public void cancel(String message, Throwable cause) {}

                @Override
                public void halfClose() {}

                @Override
                public void sendMessage(Q message) {}
            };
        }
    }

    /**
     * A lease of 3 s with a delay of 1.2 s: etcd grants the locker's lease 5 s (3 + 2, the delay rounded up), the
     * holder's validity is at most 3 s ahead, and a release frees the key at once for another locker.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lockDelay_etcdLeaseIsTtlPlusDelay_validityTtlAlone_releaseFreesAtOnce(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("delay");
        Duration ttl = Duration.ofSeconds(3);
        try (RemoteLocker holderLocker = delayed(EtcdTesting.uri(ETCD, PREFIX), mode, ttl, Duration.ofMillis(1200));
                RemoteLocker other = locker(mode, ttl)) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            Thread.sleep(1200); // keep-alives have renewed the lease meanwhile
            assertThat(Duration.between(Instant.now(), held.validUntil()))
                    .as("the holder's validity left")
                    .isLessThanOrEqualTo(ttl);
            List<KeyValue> keys = List.copyOf(keysUnder(lockPrefix(mode, key)).values());
            assertThat(keys).hasSize(1);
            long granted = inspector
                    .getLeaseClient()
                    .timeToLive(keys.get(0).getLease(), LeaseOption.DEFAULT)
                    .get(10, TimeUnit.SECONDS)
                    .getGrantedTTL();
            assertEquals(5, granted, "the etcd lease's granted TTL: 3 s + 1.2 s rounded up to 2 s");
            assertEquals(ReleaseResult.RELEASED, held.release());
            assertTrue(other.tryLock(key).isPresent(), "a released key was not free at once");
        }
    }

    /**
     * The holder is cut off from etcd (its proxy black-holes): it is told it lost the lock when its validity (the TTL)
     * runs out, and the waiter is granted no earlier than TTL + delay after the last keep-alive ({@link #endUncleanly}).
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lockDelay_holderCutOff_keyTakenForTheDelayAfterItsLoss(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("delay-cut");
        TcpProxy proxy = ETCD.member(0).proxy();
        try (RemoteLocker holderLocker = delayed(EtcdTesting.proxiedUri(ETCD, PREFIX), mode, TTL, DELAY);
                RemoteLocker waiterLocker = locker(mode, TTL)) {
            endUncleanly(mode, key, holderLocker, waiterLocker, proxy::blackhole, "holder cut off");
        } finally {
            proxy.heal();
        }
    }

    /**
     * Holds {@code key} with {@code holderLocker} (TTL 2 s, lock-delay 3 s), then {@code end}s the grant without a
     * release: the holder is told it lost the lock within the TTL and a keep-alive period, and the waiter granted after
     * that, no earlier than TTL + delay after the last keep-alive (so TTL + delay less a keep-alive period, a third of
     * the TTL, after the end), and within TTL + delay + slack of it.
     */
    private void endUncleanly(
            EtcdLockMode mode,
            String key,
            RemoteLocker holderLocker,
            RemoteLocker waiterLocker,
            Runnable end,
            String how)
            throws Exception {
        RemoteLock held = holderLocker.lock(key, maxWait());
        CompletableFuture<Long> lostAt = new CompletableFuture<>();
        held.onLost(l -> lostAt.complete(System.nanoTime()));
        Thread.sleep(300);
        long ended = System.nanoTime();
        end.run();
        RemoteLock next = waiterLocker.lock(key, maxWait());
        long granted = System.nanoTime();
        long lost = lostAt.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
        log.info(
                "etcd {}: ttl 2s, lockDelay 3s, {}: told lost {} ms after, the waiter granted {} ms after, {} ms after"
                        + " the loss",
                mode.optionValue(),
                how,
                TimeUnit.NANOSECONDS.toMillis(lost - ended),
                TimeUnit.NANOSECONDS.toMillis(granted - ended),
                TimeUnit.NANOSECONDS.toMillis(granted - lost));
        assertThat(Duration.ofNanos(lost - ended))
                .as("the end to the loss")
                .isLessThanOrEqualTo(TTL.plus(TestTimeouts.scaled(Duration.ofSeconds(1))));
        assertTrue(granted - lost > 0, "the waiter was granted before the holder was told it lost the lock");
        assertThat(Duration.ofNanos(granted - ended))
                .as("the end to the next grant")
                .isGreaterThanOrEqualTo(TTL.plus(DELAY).minus(TTL.dividedBy(3)))
                .isLessThanOrEqualTo(TTL.plus(DELAY).plus(TestTimeouts.scaled(Duration.ofSeconds(2))));
        assertTrue(Deadlines.within(maxWait(), () -> !held.isHeld()));
        assertEquals(ReleaseResult.RELEASED, next.release());
    }
}
