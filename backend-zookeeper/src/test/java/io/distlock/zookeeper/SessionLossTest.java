package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockState;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.KillSession;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The session is the lease: expiry, suspension and server restarts, against a real server this class stops. */
@Timeout(180)
class SessionLossTest {

    private static final String BASE = "/session-test";
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static TestingServer server;
    private static CuratorFramework raw;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
        raw = CuratorFrameworkFactory.newClient(server.getConnectString(), 10_000, 5_000, new RetryOneTime(100));
        raw.start();
        raw.blockUntilConnected();
    }

    @AfterAll
    static void stop() throws Exception {
        if (raw != null) {
            raw.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static String uri(String options) {
        return "zk://" + server.getConnectString() + BASE + "?" + options;
    }

    private static RemoteLocker open(String options, CapturingProvider provider) {
        return RemoteLockers.builder().uri(uri(options)).provider(provider).build();
    }

    private static int nodes(String key) {
        try {
            String path = ZKPaths.makePath(BASE, KeyCodec.encode(key));
            return raw.checkExists().forPath(path) == null
                    ? 0
                    : raw.getChildren().forPath(path).size();
        } catch (Exception e) {
            return -1; // not connected right now
        }
    }

    /** Ends the session on the server, as an expiry does: a second handle with the same id and password closes it. */
    private static void expireOnServer(ZooKeeper zk) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper clone = new ZooKeeper(
                server.getConnectString(),
                5_000,
                event -> {
                    if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                zk.getSessionId(),
                zk.getSessionPasswd());
        assertThat(connected.await(10, TimeUnit.SECONDS)).isTrue();
        clone.close();
    }

    @Test
    void sessionExpiry_firesOnLostOnce_freesTheLock_andStaleReleaseKeepsNewHolder() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = open("sessionTimeout=4s", provider);
                RemoteLocker other = RemoteLockers.open(uri("sessionTimeout=4s"))) {
            RemoteLock lock = locker.lock("expire", WAIT);
            AtomicInteger lost = new AtomicInteger();
            lock.onLost(l -> lost.incrementAndGet());

            expireOnServer(provider.opened().client().getZookeeperClient().getZooKeeper());

            Conditions.await("onLost", WAIT, () -> lost.get() == 1);
            assertThat(lock.isHeld()).isFalse();
            try (RemoteLock next = other.lock("expire", WAIT)) {
                assertThat(next.fencingToken().orElseThrow())
                        .isGreaterThan(lock.fencingToken().orElseThrow());
                // the stale handle's release neither throws nor frees the new holder
                assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
                assertThat(next.isHeld()).isTrue();
                assertThat(nodes("expire")).isEqualTo(1);
                assertThat(locker.tryLock("expire")).isEmpty();
            }
            assertThat(lost.get()).isEqualTo(1);
            // the locker goes on in a new session
            try (RemoteLock again = locker.lock("expire", WAIT)) {
                assertThat(again.isHeld()).isTrue();
            }
        }
    }

    @Test
    void curatorKillSession_firesOnLost() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = open("sessionTimeout=2s", provider)) {
            RemoteLock lock = locker.lock("kill-session", WAIT);
            CountDownLatch lost = new CountDownLatch(1);
            lock.onLost(l -> lost.countDown());
            KillSession.kill(provider.opened().client().getZookeeperClient().getZooKeeper());
            assertThat(lost.await(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(lock.isHeld()).isFalse();
            assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
        }
        // the killed session's node goes when the server expires it
        Conditions.await("the killed session's node to go", WAIT, () -> nodes("kill-session") == 0);
    }

    /** Takes and releases {@code key}; false while the locker's client is not connected yet. */
    private static boolean lockedAgain(RemoteLocker locker, String key) {
        try (RemoteLock again = locker.lock(key, WAIT)) {
            assertThat(again.isHeld()).isTrue();
            return true;
        } catch (LockBackendException e) {
            if (!e.getMessage().contains("not connected")) {
                throw e;
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void serverDown_heldLockTurnsNotHeld_withinTheSessionTimeout_andRecovers() throws Exception {
        Duration session = Duration.ofSeconds(2);
        try (RemoteLocker locker = RemoteLockers.open(uri("sessionTimeout=2s&connectTimeout=2s"))) {
            RemoteLock lock = locker.lock("suspend", WAIT);
            CountDownLatch lost = new CountDownLatch(1);
            lock.onLost(l -> lost.countDown());
            long stopped = System.nanoTime();
            server.stop();
            try {
                Conditions.await("isHeld() to turn false", session.multipliedBy(3), () -> !lock.isHeld());
                long notHeldAfter = System.nanoTime() - stopped;
                // never later than the session timeout after the last answer, which came before the stop
                assertThat(Duration.ofNanos(notHeldAfter)).isLessThanOrEqualTo(TestTimeouts.scaled(session));
                assertThat(lost.await(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                        .isTrue();
                assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
            } finally {
                server.restart();
            }
            // the client reconnects on its own backoff, which can outlast the 2 s connectTimeout of one call on a
            // loaded machine: ask again until it is back (a lock that never recovers still fails the test)
            Conditions.await("the lock again once the client is back", WAIT, () -> lockedAgain(locker, "suspend"));
        }
        Conditions.await("the old session's node to go", WAIT, () -> nodes("suspend") == 0);
    }

    /**
     * A lock node deleted while its holder is cut off (an operator's delete during a network blip): the holder cannot
     * be told then, and its session survives the blip, so after the reconnection in the same session it must find the
     * node gone (NONODE) and report the lock lost, rather than go on believing in a node that no longer exists.
     */
    @Test
    void nodeDeletedWhileDisconnected_isReportedLost_afterTheReconnectionInTheSameSession() throws Exception {
        String key = "deleted-while-cut-off";
        try (TcpProxy proxy = TcpProxy.start("zk-blip", server.getPort());
                RemoteLocker holder = RemoteLockers.open(
                        "zk://" + proxy.endpoint() + BASE + "?sessionTimeout=20s&connectTimeout=2s");
                RemoteLocker other = RemoteLockers.open(uri("sessionTimeout=20s"))) {
            RemoteLock lock = holder.lock(key, WAIT);
            AtomicInteger lost = new AtomicInteger();
            lock.onLost(l -> lost.incrementAndGet());
            String lockPath = ZKPaths.makePath(BASE, KeyCodec.encode(key));
            List<String> owned = raw.getChildren().forPath(lockPath);
            assertThat(owned).hasSize(1);
            proxy.drop(); // the holder's connection is cut and no new one gets through
            Conditions.await("the holder to notice the disconnection", WAIT, () -> proxy.openConnections() == 0);
            raw.delete().forPath(ZKPaths.makePath(lockPath, owned.get(0)));
            Thread.sleep(TestTimeouts.scaled(Duration.ofMillis(500)).toMillis());
            assertThat(lost.get())
                    .as("told of a deletion it could not have seen while cut off")
                    .isZero();
            long healed = System.nanoTime();
            proxy.heal();
            Conditions.await("the holder to report the lock lost after reconnecting", WAIT, () -> lost.get() == 1);
            Duration toldAfter = Duration.ofNanos(System.nanoTime() - healed);
            assertThat(lock.isHeld()).isFalse();
            assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
            try (RemoteLock next = other.lock(key, WAIT)) {
                assertThat(next.isHeld()).isTrue();
            }
            assertThat(lost.get()).as("onLost calls").isEqualTo(1);
            assertThat(toldAfter).as("told after the reconnection").isLessThan(TestTimeouts.scaled(WAIT));
        }
    }

    /**
     * A locker whose connecting took longer than its session timeout (the store out of reach at first, or its
     * connection attempts turned away, as an in-process TLS server's can be on a loaded machine) confirms its session
     * before its opening returns: its first {@code tryLock} of a free key is granted, not found stale.
     */
    @Test
    void openingThatTookLongerThanTheSessionTimeout_confirmsTheSession_soTheFirstTryLockIsGranted() throws Exception {
        Duration sessionTimeout = Duration.ofSeconds(2);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (TcpProxy proxy = TcpProxy.start("zk-slow-open", server.getPort())) {
            proxy.drop(); // every connection attempt is turned away until healed
            Future<RemoteLocker> opening = pool.submit(() -> RemoteLockers.open("zk://" + proxy.endpoint() + BASE
                    + "?sessionTimeout=" + sessionTimeout.toMillis() + "ms&connectTimeout=60s&tickTime="
                    + ZkTestServers.TICK_MS + "ms"));
            Thread.sleep(sessionTimeout.plusSeconds(1).toMillis()); // the fault: longer than the session timeout
            assertThat(opening).as("opened while no connection gets through").isNotDone();
            proxy.heal();
            try (RemoteLocker locker = opening.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)) {
                Optional<RemoteLock> lock = locker.tryLock("slow-open");
                assertThat(lock).as("the first tryLock of a free key").isPresent();
                assertThat(lock.get().isHeld()).isTrue();
                assertThat(lock.get().release()).isEqualTo(ReleaseResult.RELEASED);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(nodes("slow-open")).isZero();
    }

    @Test
    void waiter_blockedDuringServerRestart_getsTheLockAfterRecovery() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RemoteLocker holder = RemoteLockers.open(uri("sessionTimeout=20s"));
                RemoteLocker waiter = RemoteLockers.open(uri("sessionTimeout=20s"))) {
            RemoteLock held = holder.lock("restart", WAIT);
            Future<RemoteLock> waiting = pool.submit(() -> waiter.lock("restart", Duration.ofSeconds(60)));
            Conditions.await("the waiter queued", WAIT, () -> nodes("restart") == 2);
            server.stop();
            server.restart();
            Conditions.await("the holder still holding", WAIT, held::isHeld);
            assertThat(waiting.isDone()).isFalse();
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
            try (RemoteLock got = waiting.get(30, TimeUnit.SECONDS)) {
                assertThat(got.isHeld()).isTrue();
                assertThat(got.fencingToken().orElseThrow())
                        .isGreaterThan(held.fencingToken().orElseThrow());
            }
        } finally {
            pool.shutdownNow();
        }
        // awaited: the inspecting client may still be reconnecting after the restart (nodes() is -1 meanwhile)
        Conditions.await("no node left", WAIT, () -> nodes("restart") == 0);
    }

    @Test
    void operations_whileServerDown_failAtTheirDeadline_withAClearException() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(uri("sessionTimeout=20s&connectTimeout=2s"))) {
            server.stop();
            try {
                long start = System.nanoTime();
                assertThatThrownBy(() -> locker.lock("down", Duration.ofSeconds(1)))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining(server.getConnectString())
                        .hasMessageContaining("not connected");
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .isLessThan(TestTimeouts.scaled(Duration.ofSeconds(5)));

                start = System.nanoTime();
                assertThatThrownBy(() -> locker.tryLock("down"))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining(server.getConnectString());
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .isLessThan(TestTimeouts.scaled(Duration.ofSeconds(6)));
            } finally {
                server.restart();
            }
            // creations abandoned at the deadline are deleted once they land; the client reconnects on its own
            // schedule, which may take longer than connectTimeout, and until it has calls fail as above
            try (RemoteLock lock = takeOnceReconnected(locker, "down")) {
                Conditions.await("only our node", WAIT, () -> nodes("down") == 1);
            }
            Conditions.await("no node left", WAIT, () -> nodes("down") == 0);
            assertThat(List.of(nodes("down"))).containsExactly(0);
        }
    }

    /**
     * A wait without deadline does not wait silently through an outage: with the server down past the session, the
     * held lock is reported lost, the wait fails with the store's failure once it has had no answer for {@code
     * connectTimeout}, and once the server is back the same locker serves the key in a new session.
     */
    @Test
    void lock_withoutDeadline_whileServerStaysDownPastTheSession_failsAfterConnectTimeout_thenServesInANewSession()
            throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RemoteLocker locker = RemoteLockers.open(uri("sessionTimeout=2s&connectTimeout=2s"))) {
            RemoteLock before = locker.lock("down-a-while", WAIT);
            CountDownLatch sessionGone = new CountDownLatch(1);
            before.onLost(l -> sessionGone.countDown());
            server.stop();
            try {
                Future<RemoteLock> waiting = pool.submit(() -> locker.lock("down-a-while"));
                assertThat(sessionGone.await(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                        .as("the session was given up while the server was down")
                        .isTrue();
                assertThatThrownBy(() -> waiting.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                        .as("the unbounded wait ends with the store's failure")
                        .hasCauseInstanceOf(LockBackendException.class)
                        .hasMessageContaining(server.getConnectString())
                        .hasMessageContaining("connectTimeout");
            } finally {
                server.restart();
            }
            // the client reconnects on its own schedule; until it has, calls fail as above
            assertThat(takeOnceReconnected(locker, "down-a-while").release()).isEqualTo(ReleaseResult.RELEASED);
            assertThat(before.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void sessionExpiry_callsRightAfterIt_carryOnInTheNewSession_andReleaseSaysAlreadyLost() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = open("sessionTimeout=4s", provider)) {
            RemoteLock held = locker.lock("ride-out", WAIT);

            expireOnServer(provider.opened().client().getZookeeperClient().getZooKeeper());

            // at once, before or while the client learns of the expiry
            assertThat(held.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
            for (int i = 0; i < 20; i++) {
                locker.tryLock("ride-out-" + i).ifPresent(RemoteLock::release);
            }
            try (RemoteLock bounded = locker.lock("ride-out", WAIT);
                    RemoteLock async = locker.lockAsync("ride-out-async", WAIT)
                            .get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)) {
                assertThat(bounded.isHeld()).isTrue();
                assertThat(async.isHeld()).isTrue();
            }
        }
    }

    /**
     * The decision: a waiter whose own session expires while it waits fails with a {@link LockBackendException} saying
     * its place in the queue was lost (as Curator's and etcd's waiters do), rather than queue again at the back; its
     * node went with the session and nothing of it is left, so the holder's release leaves the key free.
     */
    @Test
    void lock_whoseSessionExpiresWhileWaiting_failsSayingThePlaceWasLost_andLeavesNothing() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RemoteLocker holder = RemoteLockers.open(uri("sessionTimeout=4s"));
                RemoteLocker waiter = open("sessionTimeout=4s", provider)) {
            RemoteLock held = holder.lock("place-lost", WAIT);
            Future<RemoteLock> waiting = pool.submit(() -> waiter.lock("place-lost", Duration.ofMinutes(2)));
            Conditions.await("the waiter queued", WAIT, () -> nodes("place-lost") == 2);

            expireOnServer(provider.opened().client().getZookeeperClient().getZooKeeper());

            assertThatThrownBy(() -> waiting.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("expired while waiting for lock 'place-lost'")
                    .hasMessageContaining("place in the queue was lost");
            assertThat(nodes("place-lost")).as("only the holder's node").isEqualTo(1);
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
            assertThat(nodes("place-lost")).isZero();
            try (RemoteLock again = waiter.tryLock("place-lost").orElseThrow()) {
                assertThat(again.isHeld()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static long sessionOf(CapturingProvider provider) {
        try {
            return provider.opened()
                    .client()
                    .getZookeeperClient()
                    .getZooKeeper()
                    .getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * Curator warns at every open when the session timeout is below its connection timeout ("session timeout [..] is
     * less than connection timeout [..]"; this module's tests silence Curator's log, so the condition is checked).
     */
    @Test
    void open_withASessionTimeoutBelowTheConnectTimeout_givesCuratorNoCauseToWarn() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = open("sessionTimeout=2s&connectTimeout=10s", provider)) {
            assertThat(locker.tryLock("no-warning")).isPresent();
            assertThat(provider.opened().client().getZookeeperClient().getConnectionTimeoutMs())
                    .isLessThanOrEqualTo(2000);
        }
    }

    /**
     * The lock-delay on a session store ({@link ZkLockDelay}): a holder whose session expires leaves a record behind
     * its node, which keeps the key from every distlock locker (with a delay of its own or not, waiting or arriving
     * later) for the delay after the record is first seen without its node; a broken holder's key is free at once.
     */
    @Nested
    class LockDelay {

        private static final Duration DELAY = Duration.ofMillis(1500);

        /** The queue nodes of {@code key} (its lock-delay records left out); -1 when not connected. */
        private int queueNodes(String key) {
            try {
                String path = ZKPaths.makePath(BASE, KeyCodec.encode(key));
                return raw.checkExists().forPath(path) == null
                        ? 0
                        : (int) raw.getChildren().forPath(path).stream()
                                .filter(name -> !ZkQueue.isDelayRecord(name))
                                .count();
            } catch (Exception e) {
                return -1;
            }
        }

        /** What a test does once a holder with the delay lost its node: with another locker, and when it went. */
        private interface AfterExpiry {
            void run(RemoteLocker other, long gone) throws Exception;
        }

        /**
         * A locker with the delay takes {@code key} (its node and its record), its session is expired on the server,
         * and once its node is seen gone {@code then} runs with another locker, without a delay of its own.
         */
        private void afterAnExpiredHolder(String key, AfterExpiry then) throws Exception {
            CapturingProvider provider = new CapturingProvider();
            try (RemoteLocker holder = open("lockDelay=" + DELAY.toMillis() + "ms", provider);
                    RemoteLocker other = RemoteLockers.open(uri("sessionTimeout=10s"))) {
                holder.lock(key, WAIT);
                assertThat(nodes(key)).as("the holder's node and its record").isEqualTo(2);
                expireOnServer(provider.opened().client().getZookeeperClient().getZooKeeper());
                Conditions.await("the expired holder's node gone", WAIT, () -> queueNodes(key) == 0);
                then.run(other, System.nanoTime());
            }
        }

        /**
         * Asserts that a grant came no sooner than the delay after {@code gone} (less 50 ms for the server's millisecond
         * stamps and the two clocks read), and within the delay plus a slack.
         */
        private void assertGrantedAfterTheDelay(long gone) {
            assertThat(Duration.ofNanos(System.nanoTime() - gone))
                    .isGreaterThanOrEqualTo(DELAY.minusMillis(50))
                    .isLessThanOrEqualTo(DELAY.plus(TestTimeouts.scaled(Duration.ofSeconds(3))));
        }

        @Test
        void lockDelay_expiredHolder_keyStaysTakenForTheDelay_forWaitersAndLaterArrivals_thenTheRecordGoes()
                throws Exception {
            afterAnExpiredHolder("delay-expired", (other, gone) -> {
                assertThat(other.tryLock("delay-expired"))
                        .as("a later arrival during the delay")
                        .isEmpty();
                try (RemoteLock next = other.lock("delay-expired", WAIT)) {
                    assertGrantedAfterTheDelay(gone);
                    assertThat(nodes("delay-expired"))
                            .as("the record deleted, our node alone")
                            .isEqualTo(1);
                }
            });
        }

        /**
         * A waiter that hears of the deletion of the node ahead of it may take its grant from that alone, without a
         * list, unless a lock-delay record may be left: its last list showed one, or the deleted node's name says its
         * locker writes them. Which it must say from its creation on, before its grant: a waiter can list between
         * that grant and the record's write (a race no test here can time, so the name is what is checked). A Curator
         * mutex behind such a node is ordered by its sequence number all the same.
         */
        @Test
        void lockDelay_holdersNode_isNamedAsAWriterOfRecords_fromItsCreation_andCuratorOrdersIt() throws Exception {
            CuratorFramework curator =
                    CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
            curator.start();
            try (RemoteLocker delayed = open("lockDelay=" + DELAY.toMillis() + "ms", new CapturingProvider());
                    RemoteLocker plain = RemoteLockers.open(uri("sessionTimeout=10s"))) {
                RemoteLock held = plain.lock("delay-named", WAIT);
                ExecutorService pool = Executors.newSingleThreadExecutor();
                try {
                    Future<RemoteLock> waiting = pool.submit(() -> delayed.lock("delay-named", WAIT));
                    Conditions.await("the delayed locker queued", WAIT, () -> queueNodes("delay-named") == 2);
                    List<String> names =
                            raw.getChildren().forPath(ZKPaths.makePath(BASE, KeyCodec.encode("delay-named")));
                    assertThat(names.stream().filter(ZkQueue::writesDelayRecord))
                            .as("the waiting node of the locker with the delay, not yet granted")
                            .singleElement()
                            .asString()
                            .contains("-" + ZkQueue.DELAY_WRITER + "lock-");
                    assertThat(names.stream().filter(ZkQueue::writesDelayRecord))
                            .hasSize(1);
                    InterProcessMutex mutex =
                            new InterProcessMutex(curator, ZKPaths.makePath(BASE, KeyCodec.encode("delay-named")));
                    held.release();
                    RemoteLock second = waiting.get(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(mutex.acquire(100, TimeUnit.MILLISECONDS))
                            .as("Curator behind the held node named so")
                            .isFalse();
                    second.release();
                    assertThat(mutex.acquire(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                            .isTrue();
                    mutex.release();
                } finally {
                    pool.shutdownNow();
                }
            } finally {
                curator.close();
            }
        }

        /** A {@code tryLock} caller alone, never waiting, is granted once the delay after the first look passed. */
        @Test
        void lockDelay_expiredHolder_tryLockAlone_isGrantedOnceTheDelayPassed() throws Exception {
            afterAnExpiredHolder("delay-try", (other, gone) -> {
                Optional<RemoteLock> got = other.tryLock("delay-try");
                while (got.isEmpty()) {
                    assertThat(Duration.ofNanos(System.nanoTime() - gone))
                            .isLessThan(DELAY.plus(TestTimeouts.scaled(Duration.ofSeconds(3))));
                    Thread.sleep(50);
                    got = other.tryLock("delay-try");
                }
                assertGrantedAfterTheDelay(gone);
                got.get().close();
            });
        }

        /** The asynchronous wait looks again when the delay has passed: no watch fires for it. */
        @Test
        void lockDelay_expiredHolder_lockAsync_isGrantedAfterTheDelay() throws Exception {
            afterAnExpiredHolder("delay-async", (other, gone) -> {
                try (RemoteLock next = other.lockAsync("delay-async", WAIT).get(30, TimeUnit.SECONDS)) {
                    assertGrantedAfterTheDelay(gone);
                }
            });
        }

        /**
         * Curator's mutex is not held back by a record (it sorts it after its own nodes), and does not honour the
         * delay: it takes the key at once. distlock's inspection leaves the record out; the next distlock acquirer still
         * waits the delay, counted from when it first sees the record without its node.
         */
        @Test
        void lockDelay_expiredHolder_curatorMutexIgnoresTheRecord_distlockStillWaits() throws Exception {
            afterAnExpiredHolder("delay-curator", (other, gone) -> {
                InterProcessMutex mutex =
                        new InterProcessMutex(raw, ZKPaths.makePath(BASE, KeyCodec.encode("delay-curator")));
                assertThat(mutex.acquire(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                        .isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - gone)).isLessThan(DELAY);
                try {
                    LockState state = other.inspect("delay-curator");
                    assertThat(state.holders()).hasSize(1);
                    assertThat(state.waiting()).hasValue(0);
                } finally {
                    mutex.release();
                }
                long seen = System.nanoTime();
                assertThat(other.tryLock("delay-curator"))
                        .as("distlock during the delay")
                        .isEmpty();
                try (RemoteLock next = other.lock("delay-curator", WAIT)) {
                    assertGrantedAfterTheDelay(seen);
                }
            });
        }

        /** A broken grant ends as a released one: its record goes with it, and the key is free at once. */
        @Test
        void lockDelay_brokenHolder_keyIsFreeAtOnce() throws Exception {
            try (RemoteLocker holder = RemoteLockers.open(uri("lockDelay=1h"));
                    RemoteLocker other = RemoteLockers.open(uri("sessionTimeout=10s"))) {
                RemoteLock lock = holder.lock("delay-broken", WAIT);
                assertThat(other.breakLock("delay-broken")).hasSize(1);
                Optional<RemoteLock> got = other.tryLock("delay-broken");
                assertThat(got).isPresent();
                assertThat(nodes("delay-broken")).isEqualTo(1);
                got.get().close();
                lock.close();
            }
        }
    }

    /** Takes {@code key}, retrying while calls fail because the client has not reconnected since a restart. */
    private static RemoteLock takeOnceReconnected(RemoteLocker locker, String key) throws InterruptedException {
        AtomicReference<RemoteLock> got = new AtomicReference<>();
        Conditions.await("the locker to take " + key + " once reconnected", WAIT, () -> {
            try {
                locker.tryLock(key).ifPresent(got::set);
            } catch (LockBackendException notYet) {
                // not reconnected yet
            }
            return got.get() != null;
        });
        return got.get();
    }
}
