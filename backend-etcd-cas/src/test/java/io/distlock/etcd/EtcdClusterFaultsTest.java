package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockBackendException;
import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.ServerNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Member faults on a 3-member cluster: a lost member keeps locks working; a lost leader delays, never breaks, them. */
class EtcdClusterFaultsTest {

    private static final String PREFIX = "/faults";

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();

    private static Duration maxWait() {
        return TestTimeouts.scaled(Duration.ofSeconds(20));
    }

    private static RemoteLocker locker(EtcdLockMode mode) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(ETCD, PREFIX) + "?mode=" + mode.optionValue())
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .build();
    }

    /**
     * A follower frozen ({@code SIGSTOP}: its connections stay open, nothing is answered) for three TTLs: the holder's
     * session lives on through the two members that answer, so the lock stays held, told lost never, and nobody else
     * gets it. The client spreads its keep-alives over the members, and one sent to the frozen member gets no answer.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void followerFrozen_forThreeTtls_holderKeepsItsLock(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("frozen-follower");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(2)); // well above the election timeout (500 ms)
        ServerNode follower = ETCD.member((EtcdTesting.leader(ETCD) + 1) % 3);
        try (RemoteLocker holder = RemoteLockers.builder()
                        .uri(EtcdTesting.uri(ETCD, PREFIX) + "?mode=" + mode.optionValue())
                        .leaseTime(ttl)
                        .build();
                RemoteLocker other = locker(mode)) {
            RemoteLock lock = holder.lock(key, maxWait());
            AtomicInteger lost = new AtomicInteger();
            lock.onLost(l -> lost.incrementAndGet());
            follower.pause();
            try {
                boolean told = Deadlines.within(ttl.multipliedBy(3), () -> lost.get() > 0);
                assertFalse(
                        told,
                        "the holder lost its lock while only one of three members was frozen: "
                                + "its session could not be kept alive through the other two");
                assertTrue(lock.isHeld(), "isHeld() with one of three members frozen");
            } finally {
                follower.resume();
            }
            Optional<RemoteLock> stolen = other.tryLock(key);
            stolen.ifPresent(RemoteLock::close);
            assertFalse(stolen.isPresent(), "tryLock of a held lock after a follower was frozen");
            assertEquals(ReleaseResult.RELEASED, lock.release());
        }
    }

    /**
     * A waiter waits while the leader is killed: it gets the lock once the holder releases after the election, or a
     * clear exception at its deadline; never a second holder while the first holds.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void leaderKilled_whileWaiterWaits_waiterGetsLockAfterElection(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("leader-down");
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (RemoteLocker holderLocker = locker(mode);
                RemoteLocker waiterLocker = locker(mode)) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            history.acquired(held);
            held.onLost(history::lost);
            CompletableFuture<RemoteLock> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    RemoteLock lock = waiterLocker.lock(key, maxWait());
                    history.acquired(lock);
                    return lock;
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(TestTimeouts.scaled(Duration.ofMillis(300)).toMillis()); // the waiter is watching
            ETCD.member(EtcdTesting.leader(ETCD)).kill9();
            assertFalse(waiting.isDone(), "the waiter got the lock while it was held");
            history.releasing(held);
            assertEquals(ReleaseResult.RELEASED, held.release(), "release after the leader died");
            RemoteLock next;
            try {
                next = waiting.get(maxWait().multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                assertTrue(
                        e.getCause() instanceof LockTimeoutException || e.getCause() instanceof LockBackendException,
                        "a clear exception, got " + e.getCause());
                throw new AssertionError("the waiter did not get the released lock after the election", e.getCause());
            }
            assertTrue(next.isHeld());
            history.releasing(next);
            next.close();
        }
        HistoryChecker.assertConsistent(history.events());
    }

    /**
     * A write forwarded to a leader that stops answering is sent again once a member of the next term has answered,
     * not after etcd's own request timeout. The locker speaks to one follower only, which forwards the release's
     * transaction to the leader; the leader is frozen ({@code SIGSTOP}) before the release, so the forwarded proposal
     * is lost, and the follower would answer "request timed out" only after 5 s plus two election timeouts (6 s on
     * this cluster). The release must be answered sooner: after the election and the next answer that carries the new
     * term (a keep-alive of the lease, every third of the TTL).
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void leaderFrozen_aReleaseForwardedToIt_isSentAgainOnceTheNextTermAnswers(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("forwarded");
        int leader = EtcdTesting.leader(ETCD);
        ServerNode follower = ETCD.member((leader + 1) % 3);
        Duration etcdRequestTimeout = Duration.ofSeconds(5).plus(Duration.ofMillis(2 * 500));
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("etcd://" + follower.endpoint() + PREFIX + "?mode=" + mode.optionValue())
                .leaseTime(Duration.ofSeconds(3)) // a keep-alive every second
                .build()) {
            RemoteLock lock = locker.lock(key, maxWait());
            ETCD.member(leader).pause();
            long started = System.nanoTime();
            ReleaseResult released;
            try {
                released = lock.release();
            } finally {
                ETCD.member(leader).resume();
            }
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            assertEquals(ReleaseResult.RELEASED, released, "the release through the follower");
            assertTrue(
                    took.compareTo(etcdRequestTimeout.minusMillis(500)) < 0,
                    "the release took " + took.toMillis() + " ms: it waited for etcd's request timeout ("
                            + etcdRequestTimeout.toMillis() + " ms) instead of being sent again in the next term");
        }
    }

    /**
     * A fair waiter cancelled while its put may be in flight leaves no queue key, on a cluster too. The client spreads
     * requests over the members, so a clean-up's delete sent before the put was answered could be applied first, and
     * the put would then leave the key behind for as long as the session lives. Cancels at 40 points of the put.
     */
    @Test
    void fairWaiterCancelledWhileItsPutIsInFlight_leavesNoQueueKey() throws Exception {
        String key = EtcdTesting.unique("cancel-put");
        String queue = PREFIX + "/" + KeyCodec.encode(key) + "/";
        try (RemoteLocker holder = locker(EtcdLockMode.FAIR);
                RemoteLocker waiter = locker(EtcdLockMode.FAIR);
                Client client = Client.builder()
                        .endpoints(ETCD.nodes().stream()
                                .map(node -> "http://" + node.endpoint())
                                .toArray(String[]::new))
                        .build();
                RemoteLock held = holder.lock(key, maxWait())) {
            for (int i = 0; i < 40; i++) {
                CompletableFuture<RemoteLock> wait = waiter.lockAsync(key, maxWait());
                long cancelAt = System.nanoTime() + (i % 8) * 250_000L;
                while (System.nanoTime() < cancelAt) {
                    Thread.onSpinWait();
                }
                wait.cancel(false);
                boolean onlyHolders = Deadlines.within(TestTimeouts.scaled(Duration.ofSeconds(3)), () -> {
                    try {
                        return client.getKVClient()
                                        .get(
                                                ByteSequence.from(queue, StandardCharsets.UTF_8),
                                                GetOption.builder()
                                                        .isPrefix(true)
                                                        .build())
                                        .get(10, TimeUnit.SECONDS)
                                        .getCount()
                                == 1;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertTrue(onlyHolders, "cancel " + i + " left a queue key behind besides the holder's");
                assertTrue(held.isHeld());
            }
        }
    }
}
