package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import io.distlock.kit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Read-write locks and semaphores against one real in-process ZooKeeper server: the grant rule (readers share, a writer
 * excludes, a waiting writer goes before later readers, at most N permits), the layout (Curator's read-write lock
 * names, N in each permit's name, each space apart from the lock), and what a crash, a mismatched N, a cancellation or
 * a deadline leaves behind (nothing).
 */
@Timeout(120)
class ZooKeeperSharedKindsTest {

    private static final String BASE = "/shared-kinds-test";
    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(10));

    private static TestingServer server;
    private static CuratorFramework raw;
    private static RemoteLocker a;
    private static RemoteLocker b;
    private static RemoteLocker c;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
        raw = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        raw.start();
        raw.blockUntilConnected();
        a = RemoteLockers.open(uri(""));
        b = RemoteLockers.open(uri(""));
        c = RemoteLockers.open(uri(""));
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable closeable : new AutoCloseable[] {a, b, c, raw, server}) {
            if (closeable != null) {
                closeable.close();
            }
        }
    }

    private static String uri(String options) {
        return "zk://" + server.getConnectString() + BASE + (options.isEmpty() ? "" : "?" + options);
    }

    private static String readWritePath(String key) {
        return ZKPaths.makePath(BASE, ZkQueue.READ_WRITE_DIRECTORY, KeyCodec.encode(key));
    }

    private static String semaphorePath(String key) {
        return ZKPaths.makePath(BASE, ZkQueue.SEMAPHORE_DIRECTORY, KeyCodec.encode(key));
    }

    private static String lockPath(String key) {
        return ZKPaths.makePath(BASE, KeyCodec.encode(key));
    }

    /** The nodes under {@code path} now in the store. */
    private static List<String> nodes(String path) throws Exception {
        try {
            return raw.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException reaped) {
            return List.of(); // never created, or an empty container node reaped by the server
        }
    }

    private static void awaitNodes(String path, int count) throws InterruptedException {
        Conditions.await(count + " node(s) under " + path, WAIT, () -> {
            try {
                return nodes(path).size() == count;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void readers_share_andAWriter_excludesReadersAndWriters() throws Exception {
        String key = "rw/share";
        RemoteLock read = a.readWriteLock(key).readLock().tryLock().orElseThrow();
        RemoteLock alsoRead = b.readWriteLock(key).readLock().tryLock().orElseThrow();
        assertThat(read.kind()).isEqualTo(LockKind.READ);
        assertThat(nodes(readWritePath(key))).hasSize(2).allMatch(name -> name.contains(ZkQueue.READ_NAME));
        assertThat(c.readWriteLock(key).writeLock().tryLock())
                .as("a writer beside readers")
                .isEmpty();
        read.release();
        assertThat(c.readWriteLock(key).writeLock().tryLock())
                .as("a writer beside one reader")
                .isEmpty();
        alsoRead.release();

        RemoteLock write = c.readWriteLock(key).writeLock().tryLock().orElseThrow();
        assertThat(write.kind()).isEqualTo(LockKind.WRITE);
        assertThat(nodes(readWritePath(key))).singleElement().matches(name -> name.contains(ZkQueue.WRITE_NAME));
        assertThat(a.readWriteLock(key).readLock().tryLock())
                .as("a reader beside a writer")
                .isEmpty();
        assertThat(b.readWriteLock(key).writeLock().tryLock())
                .as("a writer beside a writer")
                .isEmpty();
        write.release();
        assertThat(nodes(readWritePath(key))).isEmpty();
    }

    @Test
    void aWaitingWriter_isServedBefore_laterReaders_andTheReadersAfterItShareOnceItGoes() throws Exception {
        String key = "rw/order";
        RemoteLock reader = a.readWriteLock(key).readLock().lock(WAIT);
        CompletableFuture<RemoteLock> writer = b.readWriteLock(key).writeLock().lockAsync(WAIT.multipliedBy(3));
        awaitNodes(readWritePath(key), 2);
        assertThat(c.readWriteLock(key).readLock().tryLock())
                .as("a reader that comes after a waiting writer")
                .isEmpty();
        CompletableFuture<RemoteLock> laterReader =
                c.readWriteLock(key).readLock().lockAsync(WAIT.multipliedBy(3));
        CompletableFuture<RemoteLock> anotherLaterReader =
                a.readWriteLock(key).readLock().lockAsync(WAIT.multipliedBy(3));
        awaitNodes(readWritePath(key), 4);

        reader.release();
        RemoteLock write = writer.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(laterReader).as("a later reader while the writer holds").isNotDone();
        assertThat(anotherLaterReader).isNotDone();
        assertThat(write.fencingToken().orElseThrow())
                .isGreaterThan(reader.fencingToken().orElseThrow());
        write.release();
        RemoteLock one = laterReader.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        RemoteLock two = anotherLaterReader.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(one.isHeld() && two.isHeld())
                .as("both later readers at once")
                .isTrue();
        one.release();
        two.release();
    }

    @Test
    void aWaiter_watchesOnlyTheNodeWhoseDeletionCanGrantIt() {
        String r = "_c_1-" + ZkQueue.READ_NAME;
        String w = "_c_2-" + ZkQueue.WRITE_NAME;
        List<String> queue = List.of(r + "01", w + "02", r + "03", w + "04", r + "05", r + "06", w + "07");
        ZkQueue read = ZkQueue.of(request(LockKind.READ, Integer.MAX_VALUE), BASE);
        ZkQueue write = ZkQueue.of(request(LockKind.WRITE, 1), BASE);
        assertThat(read.standing(queue, 0).granted()).isTrue();
        assertThat(read.standing(queue, 2).watch())
                .as("the nearest writer ahead")
                .containsExactly(w + "02");
        assertThat(read.standing(queue, 5).watch()).containsExactly(w + "04");
        assertThat(write.standing(queue, 6).watch())
                .as("a writer's predecessor")
                .containsExactly(r + "06");
        assertThat(write.standing(queue, 1).watch()).containsExactly(r + "01");

        String p = "_c_3-2" + ZkQueue.PERMIT_NAME;
        List<String> permits = List.of(p + "01", p + "02", p + "03", p + "04", p + "05");
        ZkQueue permit = ZkQueue.of(request(LockKind.PERMIT, 2), BASE);
        assertThat(permit.standing(permits, 1).granted()).isTrue();
        assertThat(permit.standing(permits, 2).watch())
                .as("the N nodes right ahead")
                .containsExactly(p + "01", p + "02");
        assertThat(permit.standing(permits, 4).watch()).containsExactly(p + "03", p + "04");
        assertThat(ZkQueue.permits(p + "05")).isEqualTo(2);
    }

    private static io.distlock.spi.LockRequest request(LockKind kind, int limit) {
        return new io.distlock.spi.LockRequest("k", "owner", Duration.ofSeconds(10), lease -> {}, kind, limit);
    }

    @Test
    void aSemaphore_holdsAtMostNPermits_acrossThreeLockers_andReachesN() throws Exception {
        String key = "sem/bound";
        int permits = 2;
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> runs = new ArrayList<>();
            RemoteLocker[] lockers = {a, b, c};
            for (int t = 0; t < 6; t++) {
                RemoteLocker locker = lockers[t % 3];
                runs.add(pool.submit(() -> {
                    for (int i = 0; i < 5; i++) {
                        try (RemoteLock permit = locker.semaphore(key, permits).lock(WAIT.multipliedBy(3))) {
                            assertThat(permit.kind()).isEqualTo(LockKind.PERMIT);
                            int now = holding.incrementAndGet();
                            most.accumulateAndGet(now, Math::max);
                            Thread.sleep(20);
                            holding.decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> run : runs) {
                run.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(most.get()).as("most permits held at once").isEqualTo(permits);
        assertThat(nodes(semaphorePath(key))).isEmpty();
    }

    @Test
    void aPermitHolderWhoseSessionExpires_freesItsPermit_toTheWaiter() throws Exception {
        String key = "sem/crash";
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker crashing = RemoteLockers.builder()
                .uri(uri("sessionTimeout=4s"))
                .provider(provider)
                .build()) {
            RemoteLock doomed = crashing.semaphore(key, 2).lock(WAIT);
            RemoteLock other = a.semaphore(key, 2).lock(WAIT);
            CompletableFuture<RemoteLock> waiter = b.semaphore(key, 2).lockAsync(WAIT.multipliedBy(3));
            awaitNodes(semaphorePath(key), 3);
            assertThat(waiter).isNotDone();
            AtomicInteger lost = new AtomicInteger();
            doomed.onLost(lock -> lost.incrementAndGet());

            expireOnServer(provider.opened().client().getZookeeperClient().getZooKeeper());

            RemoteLock granted = waiter.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(granted.isHeld()).isTrue();
            Conditions.await("the expired holder's onLost", WAIT, () -> lost.get() == 1);
            assertThat(doomed.isHeld()).isFalse();
            assertThat(other.isHeld()).as("the other holder keeps its permit").isTrue();
            assertThat(c.semaphore(key, 2).tryLock()).as("still two holders").isEmpty();
            granted.release();
            other.release();
        }
        awaitNodes(semaphorePath(key), 0);
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
    void aSemaphoreAskedWithAnotherN_isRefused_byEveryCall_andLeavesNothing() throws Exception {
        String key = "sem/mismatch";
        RemoteLock holder = a.semaphore(key, 1).lock(WAIT);
        CompletableFuture<RemoteLock> waiter = b.semaphore(key, 1).lockAsync(WAIT.multipliedBy(3));
        awaitNodes(semaphorePath(key), 2);
        assertThat(nodes(semaphorePath(key))).allMatch(name -> ZkQueue.permits(name) == 1);

        assertThatThrownBy(() -> c.semaphore(key, 3).tryLock())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Semaphore 'sem/mismatch' is in use with 1 permits")
                .hasMessageContaining("asks for it with 3");
        assertThatThrownBy(() -> c.semaphore(key, 3).lock(WAIT)).isInstanceOf(LockConfigurationException.class);
        assertThatThrownBy(() -> c.semaphore(key, 2).lockAsync(WAIT).get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(LockConfigurationException.class);
        assertThat(nodes(semaphorePath(key)))
                .as("the holder's and the waiter's only")
                .hasSize(2);

        holder.release();
        RemoteLock next = waiter.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        next.release();
        try (RemoteLock any = c.semaphore(key, 3).tryLock().orElseThrow()) {
            assertThat(any.isHeld()).as("free again: any N").isTrue();
        }
        assertThat(nodes(semaphorePath(key))).isEmpty();
    }

    @Test
    void asynchronousWaits_cancelledOrPastTheirDeadline_leaveNoNode() throws Exception {
        String key = "async/leave";
        RemoteLock write = a.readWriteLock(key).writeLock().lock(WAIT);
        CompletableFuture<RemoteLock> reader = b.readWriteLock(key).readLock().lockAsync(WAIT.multipliedBy(3));
        awaitNodes(readWritePath(key), 2);
        reader.cancel(false);
        awaitNodes(readWritePath(key), 1);
        CompletableFuture<RemoteLock> writer = c.readWriteLock(key).writeLock().lockAsync(Duration.ofMillis(300));
        assertThatThrownBy(() -> writer.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .hasCauseInstanceOf(io.distlock.LockTimeoutException.class);
        awaitNodes(readWritePath(key), 1);
        write.release();
        awaitNodes(readWritePath(key), 0);

        RemoteLock permit = a.semaphore(key, 1).lock(WAIT);
        CompletableFuture<RemoteLock> waiting = b.semaphore(key, 1).lockAsync(WAIT.multipliedBy(3));
        awaitNodes(semaphorePath(key), 2);
        waiting.cancel(false);
        awaitNodes(semaphorePath(key), 1);
        assertThat(c.semaphore(key, 1).tryLock()).isEmpty();
        awaitNodes(semaphorePath(key), 1);
        permit.release();
        awaitNodes(semaphorePath(key), 0);
    }

    @Test
    void theLock_theReadWriteLock_andTheSemaphore_onOneKey_areApart() throws Exception {
        String key = "apart";
        try (RemoteLock lock = a.tryLock(key).orElseThrow();
                RemoteLock write = b.readWriteLock(key).writeLock().tryLock().orElseThrow();
                RemoteLock permit = c.semaphore(key, 1).tryLock().orElseThrow()) {
            assertThat(List.of(lock.kind(), write.kind(), permit.kind()))
                    .containsExactly(LockKind.LOCK, LockKind.WRITE, LockKind.PERMIT);
            assertThat(nodes(lockPath(key))).singleElement().matches(name -> name.contains(ZkCalls.LOCK_NAME));
            assertThat(nodes(readWritePath(key))).singleElement().matches(name -> name.contains(ZkQueue.WRITE_NAME));
            assertThat(nodes(semaphorePath(key))).singleElement().matches(name -> ZkQueue.permits(name) == 1);
        }
        // keys that look like the spaces' directories are locks of their own, beside them
        for (String lookAlike : List.of(ZkQueue.READ_WRITE_DIRECTORY, ZkQueue.SEMAPHORE_DIRECTORY)) {
            try (RemoteLock write = b.readWriteLock(key).writeLock().tryLock().orElseThrow();
                    RemoteLock lock = a.tryLock(lookAlike).orElseThrow()) {
                assertThat(lockPath(lookAlike)).isNotEqualTo(ZKPaths.makePath(BASE, lookAlike));
                assertThat(write.isHeld() && lock.isHeld()).isTrue();
            }
        }
    }

    @Test
    void curatorsReadWriteLock_onTheSamePath_sharesAndExcludesWithDistlock() throws Exception {
        String key = "curator/rw";
        InterProcessReadWriteLock curator = new InterProcessReadWriteLock(raw, readWritePath(key));
        InterProcessMutex curatorWrite = curator.writeLock();
        assertThat(curatorWrite.acquire(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(a.readWriteLock(key).readLock().tryLock())
                    .as("a reader beside Curator's writer")
                    .isEmpty();
        } finally {
            curatorWrite.release();
        }
        RemoteReadWriteLock distlock = a.readWriteLock(key);
        try (RemoteLock read = distlock.readLock().lock(WAIT)) {
            InterProcessMutex curatorRead = curator.readLock();
            assertThat(curatorRead.acquire(10, TimeUnit.SECONDS))
                    .as("Curator's reader shares")
                    .isTrue();
            curatorRead.release();
            assertThat(new InterProcessReadWriteLock(raw, readWritePath(key))
                            .writeLock()
                            .acquire(300, TimeUnit.MILLISECONDS))
                    .as("Curator's writer beside a distlock reader")
                    .isFalse();
            assertThat(read.isHeld()).isTrue();
        }
        Optional<RemoteLock> write = b.readWriteLock(key).writeLock().tryLock();
        assertThat(write).as("every Curator waiter left").isPresent();
        write.get().release();
    }
}
