package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockConfigurationException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** The backend against one real in-process ZooKeeper server: exclusion, order, tokens, clean-up, keys, options. */
@Timeout(120)
class ZooKeeperLockTest {

    private static final String BASE = "/locks-test";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static TestingServer server;
    private static CuratorFramework raw;
    private static RemoteLocker a;
    private static RemoteLocker b;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
        raw = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        raw.start();
        raw.blockUntilConnected();
        a = RemoteLockers.open(uri());
        b = RemoteLockers.open(uri());
    }

    @AfterAll
    static void stop() throws Exception {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        if (raw != null) {
            raw.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static String uri() {
        return "zk://" + server.getConnectString() + BASE;
    }

    private static String lockPath(String key) {
        return ZKPaths.makePath(BASE, KeyCodec.encode(key));
    }

    /** The lock nodes of {@code key} now in the store. */
    private static List<String> nodes(String key) throws Exception {
        try {
            return raw.getChildren().forPath(lockPath(key));
        } catch (org.apache.zookeeper.KeeperException.NoNodeException reaped) {
            return List.of(); // the key's container node, never created or reaped once empty (every 500 ms here)
        }
    }

    @Test
    void close_whileCallsWaitForALock_endsEveryWaitWithLockerClosedException_andLeavesNoNode() throws Exception {
        RemoteLock held = a.lock("close-waiters", WAIT);
        RemoteLocker closing = RemoteLockers.open(uri());
        List<CompletableFuture<RemoteLock>> waits = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            waits.add(CompletableFuture.supplyAsync(() -> lockQuietly(closing, Optional.empty()), pool));
            waits.add(
                    CompletableFuture.supplyAsync(() -> lockQuietly(closing, Optional.of(Duration.ofHours(1))), pool));
            waits.add(closing.lockAsync("close-waiters", Duration.ofHours(1)));
            Conditions.await("three waiters queued", WAIT, () -> nodeCount("close-waiters") == 4);

            closing.close();

            for (CompletableFuture<RemoteLock> wait : waits) {
                assertThatThrownBy(() -> wait.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                        .cause()
                        .isInstanceOf(LockerClosedException.class);
            }
            Conditions.await("only the holder's node left", WAIT, () -> nodeCount("close-waiters") == 1);
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        } finally {
            pool.shutdownNow();
        }
    }

    private static int nodeCount(String key) {
        try {
            return nodes(key).size();
        } catch (Exception e) {
            return -1;
        }
    }

    private static RemoteLock lockQuietly(RemoteLocker locker, Optional<Duration> maxWait) {
        try {
            return maxWait.isPresent() ? locker.lock("close-waiters", maxWait.get()) : locker.lock("close-waiters");
        } catch (InterruptedException e) {
            throw new IllegalStateException("interrupted, not closed", e);
        }
    }

    @Test
    void lockNode_deletedOutOfBand_isReportedLost_andReleaseSaysAlreadyLost() throws Exception {
        RemoteLock lock = a.lock("deleted-by-hand", WAIT);
        CountDownLatch lost = new CountDownLatch(1);
        lock.onLost(l -> lost.countDown());
        String node = ZKPaths.makePath(
                lockPath("deleted-by-hand"), nodes("deleted-by-hand").get(0));

        raw.delete().forPath(node); // an administrator's clean-up

        assertThat(lost.await(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                .as("onLost fired")
                .isTrue();
        assertThat(lock.isHeld()).isFalse();
        try (RemoteLock other = b.lock("deleted-by-hand", WAIT)) {
            assertThat(other.isHeld()).isTrue();
            assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
            assertThat(other.isHeld()).isTrue();
        }
    }

    @Test
    void release_ofANodeDeletedBeforeTheWatchFired_saysAlreadyLost() throws Exception {
        RemoteLock lock = a.lock("deleted-then-released", WAIT);
        String node = ZKPaths.makePath(
                lockPath("deleted-then-released"),
                nodes("deleted-then-released").get(0));
        raw.delete().forPath(node);
        assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
    }

    @Test
    void lockAsync_manyPendingOnOneKey_holdNoThread_andAreServedInCallOrder() throws Exception {
        int calls = 200;
        RemoteLock held = a.lock("async-fifo", WAIT);
        int threadsBefore = Thread.activeCount();
        List<Integer> served = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            int call = i;
            done.add(b.lockAsync("async-fifo", Duration.ofMinutes(5)).thenAccept(lock -> {
                served.add(call);
                lock.release();
            }));
        }
        Conditions.await("every call queued", WAIT, () -> nodeCount("async-fifo") == calls + 1);
        int threadsWhilePending = Thread.activeCount();

        held.release();
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
                .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);

        assertThat(threadsWhilePending - threadsBefore)
                .as("threads started for %d pending lockAsync calls", calls)
                .isLessThan(16);
        List<Integer> inCallOrder = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            inCallOrder.add(i);
        }
        assertThat(served).containsExactlyElementsOf(inCallOrder);
        assertThat(nodes("async-fifo")).isEmpty();
    }

    /**
     * The look that finds a waiting node granted runs on a locker worker, and the grant is adopted there: the caller's
     * continuation runs under that look, not after a hand-off from the backend's step thread to a worker.
     */
    @Test
    void lockAsync_grantedAfterAWait_isAdoptedOnTheWorkerWhoseLookFoundIt() throws Exception {
        RemoteLock held = a.lock("async-adopted", WAIT);
        CompletableFuture<List<String>> grantedUnder = b.lockAsync("async-adopted", Duration.ofMinutes(5))
                .thenApply(lock -> {
                    List<String> frames = new ArrayList<>();
                    frames.add(Thread.currentThread().getName());
                    for (StackTraceElement frame : Thread.currentThread().getStackTrace()) {
                        frames.add(frame.getClassName());
                    }
                    lock.release();
                    return frames;
                });
        // The waiter's first look (create the node, list, watch the holder's node) runs on the backend's one step
        // thread, and the first look of a later call runs after it: once a later call on a free key is granted, the
        // waiter watches. A release before that look ended would be found by the look itself, on the step thread.
        b.lockAsync("async-adopted-after", Duration.ofMinutes(5))
                .get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)
                .release();
        assertThat(nodeCount("async-adopted")).as("nodes queued").isEqualTo(2);

        held.release();

        List<String> frames = grantedUnder.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(frames.get(0)).as("the continuation's thread").contains("-worker-");
        assertThat(frames).as("the continuation's stack").contains(ZkAsyncAcquisition.class.getName());
    }

    @Test
    void lockAsync_cancelledWhileWaiting_deletesItsQueueNode() throws Exception {
        RemoteLock held = a.lock("async-cancel", WAIT);
        CompletableFuture<RemoteLock> waiting = b.lockAsync("async-cancel", Duration.ofHours(1));
        Conditions.await("the waiter queued", WAIT, () -> nodeCount("async-cancel") == 2);

        assertThat(waiting.cancel(true)).isTrue();

        Conditions.await("the waiter's node deleted", WAIT, () -> nodeCount("async-cancel") == 1);
        assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        assertThat(nodes("async-cancel")).isEmpty();
    }

    @Test
    void lockAsync_timedOut_failsWithLockTimeoutException_andLeavesNoNode() throws Exception {
        RemoteLock held = a.lock("async-timeout", WAIT);
        CompletableFuture<RemoteLock> waiting = b.lockAsync("async-timeout", Duration.ofMillis(300));
        assertThatThrownBy(() -> waiting.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                .cause()
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("300ms");
        Conditions.await("only the holder's node", WAIT, () -> nodeCount("async-timeout") == 1);
        assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
    }

    @Test
    void capabilities_declareFencingFairPushSession_everyKind_andTheOperations() {
        assertThat(a.capabilities())
                .isEqualTo(new Capabilities(true, true, true, LeaseModel.SESSION)
                        .with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT)
                        .with(
                                Capabilities.Operation.INSPECT,
                                Capabilities.Operation.BREAK,
                                Capabilities.Operation.WARN,
                                Capabilities.Operation.REQUEST_RELEASE,
                                Capabilities.Operation.LOCK_DELAY));
    }

    @Test
    void lock_isExclusive_acrossLockers() throws Exception {
        try (RemoteLock held = a.lock("exclusive", WAIT)) {
            assertThat(held.isHeld()).isTrue();
            assertThat(b.tryLock("exclusive")).isEmpty();
            assertThatThrownBy(() -> b.lock("exclusive", Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class);
        }
        try (RemoteLock again = b.lock("exclusive", WAIT)) {
            assertThat(again.isHeld()).isTrue();
        }
    }

    @Test
    void lockNode_followsCuratorLayout_andStoresOwnerId() throws Exception {
        try (RemoteLock held = a.lock("layout", WAIT)) {
            List<String> nodes = nodes("layout");
            assertThat(nodes).hasSize(1);
            assertThat(nodes.get(0)).matches("_c_[0-9a-f-]{36}-lock-\\d{10}");
            byte[] data = raw.getData().forPath(lockPath("layout") + "/" + nodes.get(0));
            assertThat(new String(data, java.nio.charset.StandardCharsets.UTF_8))
                    .isEqualTo(held.ownerId());
        }
    }

    @Test
    void release_leavesNoNodeBehind() throws Exception {
        RemoteLock held = a.lock("release-clean", WAIT);
        assertThat(nodes("release-clean")).hasSize(1);
        assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        assertThat(nodes("release-clean")).isEmpty();
        assertThat(held.release()).isEqualTo(ReleaseResult.ALREADY_RELEASED);
    }

    @Test
    void tryLock_whenHeld_failsAndLeavesNoNodeBehind() throws Exception {
        try (RemoteLock held = a.lock("try-clean", WAIT)) {
            for (int i = 0; i < 5; i++) {
                assertThat(b.tryLock("try-clean")).isEmpty();
            }
            assertThat(nodes("try-clean")).hasSize(1);
        }
        assertThat(nodes("try-clean")).isEmpty();
    }

    @Test
    void lock_timedOut_leavesNoNodeBehind() throws Exception {
        try (RemoteLock held = a.lock("timeout-clean", WAIT)) {
            assertThatThrownBy(() -> b.lock("timeout-clean", Duration.ofMillis(200)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(nodes("timeout-clean")).hasSize(1);
        }
        assertThat(nodes("timeout-clean")).isEmpty();
    }

    @Test
    void lock_interrupted_throwsAndLeavesNoNodeBehind() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RemoteLock held = a.lock("interrupt-clean", WAIT)) {
            Future<RemoteLock> waiter = pool.submit(() -> b.lock("interrupt-clean"));
            Conditions.await("the waiter's node", WAIT, () -> count("interrupt-clean") == 2);
            waiter.cancel(true);
            Conditions.await("the waiter's node to go", WAIT, () -> count("interrupt-clean") == 1);
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(nodes("interrupt-clean")).isEmpty();
    }

    private static int count(String key) {
        try {
            return nodes(key).size();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void waiters_areServedInArrivalOrder() throws Exception {
        int waiters = 4;
        List<RemoteLocker> lockers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(waiters);
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        try {
            for (int i = 0; i < waiters; i++) {
                lockers.add(RemoteLockers.open(uri()));
            }
            List<Future<?>> futures = new ArrayList<>();
            try (RemoteLock held = a.lock("fifo", WAIT)) {
                for (int i = 0; i < waiters; i++) {
                    int id = i;
                    RemoteLocker locker = lockers.get(i);
                    futures.add(pool.submit(() -> {
                        try (RemoteLock lock = locker.lock("fifo", WAIT)) {
                            order.add(id);
                        }
                        return null;
                    }));
                    // the next waiter arrives only once this one is queued
                    Conditions.await("waiter " + i + " queued", WAIT, () -> count("fifo") == id + 2);
                }
            }
            for (Future<?> f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
            assertThat(order).containsExactly(0, 1, 2, 3);
        } finally {
            pool.shutdownNow();
            for (RemoteLocker locker : lockers) {
                locker.close();
            }
        }
    }

    @Test
    void fencingTokens_strictlyIncrease_perKey_evenAfterParentIsReaped() throws Exception {
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 6; i++) {
            RemoteLocker locker = i % 2 == 0 ? a : b;
            try (RemoteLock lock = locker.lock("fencing", WAIT)) {
                long token = lock.fencingToken().orElseThrow();
                assertThat(token).isGreaterThan(last);
                last = token;
            }
            if (i == 2) {
                // empty container nodes are reaped by the server; tokens must keep growing afterwards
                Conditions.await("the empty lock parent to be reaped", WAIT, () -> !exists(lockPath("fencing")));
            }
        }
    }

    private static boolean exists(String path) {
        try {
            return raw.checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void lock_takenOnOneThread_isReleasedFromAnother() throws Exception {
        RemoteLock held = CompletableFuture.supplyAsync(() -> {
                    try {
                        return a.lock("cross-thread", WAIT);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .get(20, TimeUnit.SECONDS);
        assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        assertThat(nodes("cross-thread")).isEmpty();
        assertThat(b.tryLock("cross-thread")).hasValueSatisfying(RemoteLock::close);
    }

    @Test
    void oddKeys_lockIndependently_underTheirEncodedNames() throws Exception {
        List<String> keys = List.of(
                "a/b/c", "/", "zookeeper", ".", "..", "ключ-€-🔒", "sp ace%25", "x".repeat(RemoteLocker.MAX_KEY_BYTES));
        List<RemoteLock> held = new ArrayList<>();
        try {
            for (String key : keys) {
                RemoteLock lock = a.lock(key, WAIT);
                held.add(lock);
                assertThat(b.tryLock(key)).as(key).isEmpty();
                assertThat(nodes(key)).as(key).hasSize(1);
            }
            List<String> names = raw.getChildren().forPath(BASE);
            for (String key : keys) {
                assertThat(names).contains(KeyCodec.encode(key));
            }
        } finally {
            held.forEach(RemoteLock::close);
        }
        for (String key : keys) {
            assertThat(nodes(key)).as(key).isEmpty();
        }
    }

    @Test
    void lockAll_sortedKeys_allOrNothing() throws Exception {
        try (var group = a.lockAll(List.of("multi-2", "multi-1"), WAIT)) {
            assertThat(b.tryLock("multi-1")).isEmpty();
            assertThat(b.tryLock("multi-2")).isEmpty();
        }
        try (RemoteLock other = b.lock("multi-2", WAIT)) {
            assertThatThrownBy(() -> a.lockAll(List.of("multi-1", "multi-2"), Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(nodes("multi-1")).isEmpty();
            assertThat(nodes("multi-2")).hasSize(1);
        }
    }

    @Test
    void validUntil_isAboutASessionTimeoutAhead_whileConnected() throws Exception {
        try (RemoteLocker shortSession = RemoteLockers.open(uri() + "?sessionTimeout=3s");
                RemoteLock lock = shortSession.lock("valid-until", WAIT)) {
            Duration left = Duration.between(java.time.Instant.now(), lock.validUntil());
            assertThat(left).isBetween(Duration.ofMillis(1500), Duration.ofSeconds(3));
        }
    }

    @Test
    void unknownOption_isRejected_namingIt() {
        assertThatThrownBy(() -> RemoteLockers.open(uri() + "?sessionTimout=5s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sessionTimout")
                .hasMessageContaining("sessionTimeout");
    }

    @Test
    void malformedSessionTimeout_isRejected() {
        assertThatThrownBy(() -> RemoteLockers.open(uri() + "?sessionTimeout=soon"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("sessionTimeout");
    }

    @Test
    void zookeeperScheme_andBuilderOption_work() throws Exception {
        try (RemoteLocker locker = RemoteLockers.builder()
                        .uri("zookeeper://" + server.getConnectString() + BASE)
                        .option(ZooKeeperLockOptions.SESSION_TIMEOUT, "4s")
                        .build();
                RemoteLock lock = locker.lock("scheme", WAIT)) {
            assertThat(a.tryLock("scheme")).isEmpty();
        }
    }

    @Test
    void tryLock_onFreeLock_someoneAlwaysWins() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                CountDownLatch go = new CountDownLatch(1);
                Future<Optional<RemoteLock>> x = pool.submit(() -> {
                    go.await();
                    return a.tryLock("try-race");
                });
                Future<Optional<RemoteLock>> y = pool.submit(() -> {
                    go.await();
                    return b.tryLock("try-race");
                });
                go.countDown();
                Optional<RemoteLock> rx = x.get(20, TimeUnit.SECONDS);
                Optional<RemoteLock> ry = y.get(20, TimeUnit.SECONDS);
                assertThat(rx.isPresent() || ry.isPresent())
                        .as("round " + round)
                        .isTrue();
                assertThat(rx.isPresent() && ry.isPresent())
                        .as("round " + round)
                        .isFalse();
                rx.ifPresent(RemoteLock::close);
                ry.ifPresent(RemoteLock::close);
                assertThat(nodes("try-race")).isEmpty();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Release requests: a rewrite of the holder node's data (same bytes, next version) reaches the holder through the
     * watch on its own node, once per request, also when written before that watch was set; the node's data (the owner
     * id inspection shows) stays as it was.
     */
    @Nested
    class ReleaseRequests {

        private String onlyNode(String key) throws Exception {
            String path = lockPath(key);
            List<String> children = raw.getChildren().forPath(path);
            assertThat(children).hasSize(1);
            return ZKPaths.makePath(path, children.get(0));
        }

        /**
         * Five requests, each after the previous one was heard: each runs the listener once, and the time from the
         * request's call to the listener is logged (median, max) as the bound measured on one server.
         */
        @Test
        void requestRelease_reachesTheHolderOncePerRequest_leavingItsNodesDataAsIs() throws Exception {
            BlockingQueue<Long> heard = new LinkedBlockingQueue<>();
            try (RemoteLock lock = a.lock("rr/measured", WAIT)) {
                lock.onReleaseRequested(l -> heard.add(System.nanoTime()));
                Thread.sleep(300); // past the locker's deferred pass, so the watch on the node is set
                String node = onlyNode("rr/measured");
                byte[] before = raw.getData().forPath(node);
                List<Long> micros = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    long asked = System.nanoTime();
                    List<LockHolder> holders = b.requestRelease("rr/measured");
                    assertThat(holders).extracting(LockHolder::ownerId).containsExactly(lock.ownerId());
                    Long at = heard.poll(
                            TestTimeouts.scaled(Duration.ofSeconds(2)).toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(at).as("listener run for request %d", i + 1).isNotNull();
                    micros.add(TimeUnit.NANOSECONDS.toMicros(at - asked));
                }
                Thread.sleep(200);
                assertThat(heard).as("listener runs beyond one per request").isEmpty();
                assertThat(raw.getData().forPath(node)).isEqualTo(before);
                assertThat(a.inspect("rr/measured").holders())
                        .extracting(LockHolder::ownerId)
                        .containsExactly(lock.ownerId());
                assertThat(lock.isHeld()).isTrue();
                List<Long> sorted = new ArrayList<>(micros);
                Collections.sort(sorted);
                LoggerFactory.getLogger(ZooKeeperLockTest.class)
                        .info(
                                "Release request to listener on one ZooKeeper server, 5 requests (us): {}; median {} us, max {} us",
                                micros,
                                sorted.get(2),
                                sorted.get(4));
            }
        }

        /**
         * A request written in the moment after the grant, before the locker's deferred pass sets the watch on the node,
         * is read from the node's data version when the watch is set: heard once, not lost.
         */
        @Test
        void requestRelease_rightAfterTheGrant_beforeTheNodeIsWatched_isHeardOnce() throws Exception {
            AtomicInteger heard = new AtomicInteger();
            try (RemoteLock lock = a.lock("rr/early", WAIT)) {
                assertThat(b.requestRelease("rr/early")).hasSize(1);
                assertThat(b.requestRelease("rr/early")).hasSize(1);
                lock.onReleaseRequested(l -> heard.incrementAndGet());
                long until = System.nanoTime()
                        + TestTimeouts.scaled(Duration.ofSeconds(2)).toNanos();
                while (heard.get() < 2 && System.nanoTime() - until < 0) {
                    Thread.sleep(10);
                }
                Thread.sleep(200);
                assertThat(heard.get()).isEqualTo(2);
                assertThat(lock.isHeld()).isTrue();
            }
        }

        /** A free key: nothing asked, nothing written, and its next holder hears no request. */
        @Test
        void requestRelease_onAFreeKey_asksNobody_andReachesNoLaterHolder() throws Exception {
            try (RemoteLock first = a.lock("rr/free", WAIT)) {
                assertThat(first.isHeld()).isTrue();
            }
            assertThat(b.requestRelease("rr/free")).isEmpty();
            AtomicInteger heard = new AtomicInteger();
            try (RemoteLock later = a.lock("rr/free", WAIT)) {
                later.onReleaseRequested(l -> heard.incrementAndGet());
                Thread.sleep(500); // the watch is set, and its first answer read
                assertThat(new String(raw.getData().forPath(onlyNode("rr/free")), StandardCharsets.UTF_8))
                        .isEqualTo(later.ownerId());
            }
            assertThat(heard.get()).isZero();
        }
    }
}
