package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The request counter behind the benchmark's "store requests per acquisition". */
class StoreRequestsTest {

    private static TestingServer server;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void storeRequests_freeLock_countsCreateChildrenAndDelete() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("zk://" + server.getConnectString() + "/requests")
                .provider(provider)
                .build()) {
            locker.lock("warm").close(); // the key's parent nodes are created on first use
            long before = provider.opened().storeRequests().orElseThrow();
            for (int i = 0; i < 5; i++) {
                try (RemoteLock lock = locker.lock("warm")) {
                    assertThat(lock.isHeld()).isTrue();
                }
            }
            // each: create the node, list the children (ours is first), delete the node; and the watch on the held
            // node if it was still held when the batch of watches was set (at most 50 ms after the grant)
            assertThat(provider.opened().storeRequests().orElseThrow() - before).isBetween(15L, 20L);
        }
    }

    /**
     * A waiter that watched the first node hears of its deletion and is granted without listing the queue again:
     * the list would wait at the server behind the writes queued meanwhile (the leaver's next create).
     */
    @Test
    void storeRequests_waiterBehindTheFirstNode_isGrantedOnItsDeletion_withoutAList() throws Exception {
        CapturingProvider holderProvider = new CapturingProvider();
        CapturingProvider waiterProvider = new CapturingProvider();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (RemoteLocker holder = open(holderProvider);
                RemoteLocker waiter = open(waiterProvider)) {
            RemoteLock held = holder.lock("next");
            long before = waiterProvider.opened().storeRequests().orElseThrow();
            Future<RemoteLock> waiting = pool.submit(() -> waiter.lock("next"));
            // create, list, and the watch on the holder's node
            Conditions.await(
                    "the waiter watching",
                    Duration.ofSeconds(20),
                    () -> waiterProvider.opened().storeRequests().orElseThrow() - before == 3);
            held.release();
            try (RemoteLock got = waiting.get(20, TimeUnit.SECONDS)) {
                assertThat(got.isHeld()).isTrue();
                Thread.sleep(500); // the watch on the held node is set at most 50 ms after the grant
                assertThat(waiterProvider.opened().storeRequests().orElseThrow() - before)
                        .as("create, list, the watch on the predecessor, the watch on the held node: no second list")
                        .isEqualTo(4);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A waiter two behind (a queue of three, as an election's) watches its predecessor and notes the first node's
     * deletion too, so that the predecessor's deletion grants it without a list: that list would wait at the server
     * behind the writes of that moment (the leaver's next create), on the hand-over's path.
     */
    @Test
    void storeRequests_waiterTwoBehind_notesTheFirstNodesDeletion_andIsGrantedWithoutAList() throws Exception {
        CapturingProvider waiterProvider = new CapturingProvider();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (RemoteLocker holder = open(new CapturingProvider());
                RemoteLocker middle = open(new CapturingProvider());
                RemoteLocker waiter = open(waiterProvider)) {
            RemoteLock held = holder.lock("two-behind");
            Future<RemoteLock> second = pool.submit(() -> middle.lock("two-behind"));
            Conditions.await("the middle waiter queued", Duration.ofSeconds(20), () -> children("two-behind") == 2);
            long before = waiterProvider.opened().storeRequests().orElseThrow();
            Future<RemoteLock> third = pool.submit(() -> waiter.lock("two-behind"));
            Conditions.await(
                    "the last waiter watching both nodes ahead (create, list, two watches)",
                    Duration.ofSeconds(20),
                    () -> waiterProvider.opened().storeRequests().orElseThrow() - before == 4);
            held.release();
            second.get(20, TimeUnit.SECONDS).release();
            try (RemoteLock got = third.get(20, TimeUnit.SECONDS)) {
                assertThat(got.isHeld()).isTrue();
                Thread.sleep(500); // the watch on the held node is set at most 50 ms after the grant
                assertThat(waiterProvider.opened().storeRequests().orElseThrow() - before)
                        .as("create, list, the two watches, the watch on the held node: no second list")
                        .isEqualTo(5);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The note is no shortcut past a holder: a waiter two behind whose predecessor gave up its wait while the first
     * node still holds the lock lists the queue, waits on, and is granted only once the holder releases.
     */
    @Test
    void waiterTwoBehind_whosePredecessorGivesUp_waitsForTheHolder() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (RemoteLocker holder = open(new CapturingProvider());
                RemoteLocker middle = open(new CapturingProvider());
                RemoteLocker waiter = open(new CapturingProvider())) {
            RemoteLock held = holder.lock("gives-up");
            CompletableFuture<RemoteLock> second = middle.lockAsync("gives-up", Duration.ofMinutes(5));
            Conditions.await("the middle waiter queued", Duration.ofSeconds(20), () -> children("gives-up") == 2);
            Future<RemoteLock> third = pool.submit(() -> waiter.lock("gives-up"));
            Conditions.await("the last waiter queued", Duration.ofSeconds(20), () -> children("gives-up") == 3);
            second.cancel(true); // withdraws the middle waiter: its node is deleted
            Conditions.await("the middle node gone", Duration.ofSeconds(20), () -> children("gives-up") == 2);
            Thread.sleep(500); // time for a wrong grant
            assertThat(third.isDone())
                    .as("granted while the holder held the lock")
                    .isFalse();
            assertThat(held.isHeld()).isTrue();
            held.release();
            try (RemoteLock got = third.get(20, TimeUnit.SECONDS)) {
                assertThat(got.isHeld()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** The queue nodes of {@code key}, through a client of the test's own; -1 if it could not tell. */
    private static int children(String key) {
        try (CuratorFramework raw =
                CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100))) {
            raw.start();
            raw.blockUntilConnected();
            String path = "/requests/" + KeyCodec.encode(key);
            return raw.checkExists().forPath(path) == null
                    ? 0
                    : raw.getChildren().forPath(path).size();
        } catch (Exception e) {
            return -1;
        }
    }

    private static RemoteLocker open(CapturingProvider provider) {
        return RemoteLockers.builder()
                .uri("zk://" + server.getConnectString() + "/requests")
                .provider(provider)
                .build();
    }
}
