package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockBackendException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.TcpProxy;
import io.etcd.jetcd.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A session lost: a holder cut off past its TTL is told and never overlaps the next holder; a waiter whose lease is
 * revoked fails (fair) or waits on under a new lease (cas).
 */
class EtcdSessionLossTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    /**
     * The holder's connection is cut (partition) for longer than the TTL: its keep-alives stop, it reports the lock
     * lost (from its own validity, measured from before each keep-alive was sent), etcd expires the lease and a waiter
     * gets the lock — and the history shows no second holder while the first still believed it held the lock.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void connectionCutPastTtl_reportsLost_andNoOverlapInHistory(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("cut");
        Duration ttl = Duration.ofSeconds(2);
        HistoryRecorder history = HistoryRecorder.inMemory();
        TcpProxy proxy = ETCD.member(0).proxy();
        try (RemoteLocker holderLocker = proxiedLocker(mode, ttl);
                RemoteLocker waiterLocker = locker(mode, TestTimeouts.scaled(Duration.ofSeconds(5)))) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            history.acquired(held);
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> {
                history.lost(l);
                lost.incrementAndGet();
            });
            CompletableFuture<RemoteLock> next = CompletableFuture.supplyAsync(() -> {
                try {
                    RemoteLock lock = waiterLocker.lock(key, maxWait());
                    history.acquired(lock);
                    return lock;
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            proxy.blackhole();
            RemoteLock second = next.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(Deadlines.within(maxWait(), () -> lost.get() > 0), "the cut-off holder was never told");
            assertFalse(held.isHeld());
            history.releasing(second);
            second.close();
            proxy.heal();
            assertEquals(ReleaseResult.ALREADY_LOST, held.release());
            assertEquals(1, lost.get(), "onLost calls");
            HistoryChecker.assertConsistent(history.events());
        } finally {
            proxy.heal();
        }
    }

    /**
     * etcd's {@code TestMutexLockSessionExpired}: a fair waiter's own lease is revoked (by another client, as etcd's
     * test closes the waiter's session) while it waits behind a holder. Its queue key went with the lease, and with it
     * its place in line: the waiting call fails with a {@link LockBackendException} saying so, rather than queueing
     * again at the back under a new lease, and nothing of it is left. Either while the holder still holds (told by its
     * keep-alive), or when the holder releases right after the revocation (etcd's test's order: told when it looks).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void fairWaiter_ownLeaseRevokedWhileWaiting_failsAndLeavesNoEntry(boolean holderReleases) throws Exception {
        String key = EtcdTesting.unique("session-expired");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker holder = locker(EtcdLockMode.FAIR, ttl);
                RemoteLocker waiter = locker(EtcdLockMode.FAIR, ttl)) {
            RemoteLock held = holder.lock(key, maxWait());
            CompletableFuture<RemoteLock> waiting = waiter.lockAsync(key, maxWait());
            awaitKeyCount(EtcdLockMode.FAIR, key, 2, "the waiter's queue key behind the holder's");
            KeyValue waiterKey = keysUnder(lockPrefix(EtcdLockMode.FAIR, key)).values().stream()
                    .filter(kv ->
                            !kv.getValue().toString(StandardCharsets.UTF_8).equals(held.ownerId()))
                    .findFirst()
                    .orElseThrow();
            inspector.getLeaseClient().revoke(waiterKey.getLease()).get(10, TimeUnit.SECONDS);
            if (holderReleases) {
                assertEquals(ReleaseResult.RELEASED, held.release());
            }
            Duration bound = EtcdTesting.sessionTimeout(ttl).plus(TestTimeouts.scaled(Duration.ofSeconds(2)));
            assertTrue(
                    Deadlines.within(bound, waiting::isDone),
                    "the waiter whose lease was revoked had not returned within " + bound);
            assertThatThrownBy(waiting::join)
                    .hasCauseInstanceOf(LockBackendException.class)
                    .cause()
                    .hasMessageContaining("expired while waiting")
                    .hasMessageContaining("place in the queue");
            Map<String, KeyValue> left = keysUnder(lockPrefix(EtcdLockMode.FAIR, key));
            if (holderReleases) {
                assertThat(left)
                        .as("keys after the release and the failed waiter")
                        .isEmpty();
            } else {
                assertTrue(held.isHeld(), "the holder lost its lock to a waiter's expired lease");
                assertThat(left.values())
                        .as("keys of '%s' while the holder holds, after the waiter failed", key)
                        .extracting(kv -> kv.getValue().toString(StandardCharsets.UTF_8))
                        .containsExactly(held.ownerId());
                assertEquals(ReleaseResult.RELEASED, held.release());
            }
            waiter.tryLock(key).orElseThrow().release(); // the waiter's locker works on, under a new lease
            assertNothingLeft(EtcdLockMode.FAIR, key, "the waiter's failure and both releases");
        }
    }

    /**
     * In {@code cas} mode a waiter has no key and no place in line: it watches the holder's key and tries again when
     * it goes. Its locker's lease revoked while it waits (by another client) costs it nothing: it gets the lock at the
     * release, under a new lease, and nothing is left.
     */
    @Test
    void casWaiter_ownLeaseRevokedWhileWaiting_getsTheLockUnderANewLease() throws Exception {
        String key = EtcdTesting.unique("cas-session-expired");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker holder = locker(EtcdLockMode.CAS, ttl);
                RemoteLocker waiter = locker(EtcdLockMode.CAS, ttl)) {
            long waiterLease;
            try (RemoteLock probe = waiter.tryLock(key).orElseThrow()) {
                waiterLease = keysUnder(lockPrefix(EtcdLockMode.CAS, key))
                        .values()
                        .iterator()
                        .next()
                        .getLease();
            }
            RemoteLock held = holder.lock(key, maxWait());
            CompletableFuture<RemoteLock> waiting = waiter.lockAsync(key, maxWait());
            inspector.getLeaseClient().revoke(waiterLease).get(10, TimeUnit.SECONDS);
            assertEquals(ReleaseResult.RELEASED, held.release());
            RemoteLock next = waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(next.isHeld(), "the waiter's lock is not held");
            assertThat(keysUnder(lockPrefix(EtcdLockMode.CAS, key)).values())
                    .extracting(KeyValue::getLease)
                    .singleElement()
                    .isNotEqualTo(waiterLease);
            assertEquals(ReleaseResult.RELEASED, next.release());
            assertNothingLeft(EtcdLockMode.CAS, key, "the waiter's release");
        }
    }
}
