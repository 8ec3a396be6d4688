package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * distlock and Curator's {@code InterProcessMutex} on the same path exclude each other, both ways, and share one FIFO
 * queue: the mutex's path is {@code <basePath>/<encoded key>}.
 */
@Timeout(120)
class CuratorInteropTest {

    private static final String BASE = "/interop";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static TestingServer server;
    private static CuratorFramework curator;
    private static RemoteLocker locker;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
        curator = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        curator.start();
        curator.blockUntilConnected();
        locker = RemoteLockers.open("zk://" + server.getConnectString() + BASE);
    }

    @AfterAll
    static void stop() throws Exception {
        if (locker != null) {
            locker.close();
        }
        if (curator != null) {
            curator.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static InterProcessMutex mutex(String key) {
        return new InterProcessMutex(curator, ZKPaths.makePath(BASE, KeyCodec.encode(key)));
    }

    @Test
    void distlockHolder_excludesCuratorMutex() throws Exception {
        InterProcessMutex mutex = mutex("orders/42");
        try (RemoteLock held = locker.lock("orders/42", WAIT)) {
            assertThat(held.isHeld()).isTrue();
            assertThat(mutex.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
        }
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        mutex.release();
    }

    @Test
    void curatorMutexHolder_excludesDistlock() throws Exception {
        InterProcessMutex mutex = mutex("orders/43");
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(locker.tryLock("orders/43")).isEmpty();
            assertThatThrownBy(() -> locker.lock("orders/43", Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class);
        } finally {
            mutex.release();
        }
        try (RemoteLock lock = locker.lock("orders/43", WAIT)) {
            assertThat(lock.isHeld()).isTrue();
        }
    }

    /**
     * Inspection reads Curator's holder too: its node is the queue's head; the label is what Curator stores in it (its
     * client's address), since that is no distlock owner id. Breaking it deletes Curator's node, as {@code zkCli.sh}
     * would, and lets distlock in.
     */
    @Test
    void curatorMutexHolder_isShownByInspect_withItsNodesData_andCanBeBroken() throws Exception {
        InterProcessMutex mutex = mutex("orders/44");
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        try {
            String data = new String(
                    curator.getData()
                            .forPath(mutex.getParticipantNodes().iterator().next()),
                    java.nio.charset.StandardCharsets.UTF_8);
            LockState state = locker.inspect("orders/44");
            assertThat(state.holders()).extracting(LockHolder::ownerLabel).containsExactly(data);
            assertThat(locker.listHeld()).extracting(LockState::key).contains("orders/44");
            assertThat(locker.breakLock("orders/44")).hasSize(1);
            try (RemoteLock lock = locker.lock("orders/44", WAIT)) {
                assertThat(lock.isHeld()).isTrue();
            }
        } finally {
            mutex.release(); // Curator ignores its node being gone already
        }
    }

    @Test
    void distlockWaiter_isWokenByCuratorRelease_beforeALaterCuratorWaiter() throws Exception {
        String key = "orders/44";
        InterProcessMutex first = mutex(key);
        assertThat(first.acquire(10, TimeUnit.SECONDS)).isTrue();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<RemoteLock> distlockWaiter = pool.submit(() -> locker.lock(key, WAIT));
            Conditions.await("the distlock waiter queued", WAIT, () -> children(key) == 2);
            InterProcessMutex later = mutex(key);
            Future<Boolean> curatorWaiter = pool.submit(() -> {
                boolean got = later.acquire(20, TimeUnit.SECONDS);
                if (got) {
                    later.release();
                }
                return got;
            });
            Conditions.await("the later Curator waiter queued", WAIT, () -> children(key) == 3);
            first.release();
            RemoteLock lock = distlockWaiter.get(20, TimeUnit.SECONDS);
            assertThat(lock.isHeld()).isTrue();
            assertThat(curatorWaiter.isDone()).isFalse();
            lock.close();
            assertThat(curatorWaiter.get(20, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    private static int children(String key) {
        try {
            return curator.getChildren()
                    .forPath(ZKPaths.makePath(BASE, KeyCodec.encode(key)))
                    .size();
        } catch (Exception e) {
            return 0;
        }
    }
}
