package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.testing.ZooKeeperEnsemble;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.DefaultZookeeperFactory;
import org.apache.curator.utils.ZKPaths;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Joining a key's queue: the lock node's create and the list of the queue go out together, one round trip, and the
 * ways out of that when the create's answer is not the plain one. The tests run on an application's client, whose
 * ZooKeeper handle they instrument.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class EnqueueTest {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private static final long WAIT_SECONDS = 30;

    /** The children of {@code path}; none once the server reaped the key's empty container (every 500 ms here). */
    private static List<String> nodesLeft(CuratorFramework client, String path) throws Exception {
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException reaped) {
            return List.of();
        }
    }

    private static CuratorFramework client(ZookeeperFactory factory) {
        return CuratorFrameworkFactory.builder()
                .connectString(ZK.connectString())
                .retryPolicy(new RetryOneTime(10))
                .zookeeperFactory(factory)
                .build();
    }

    /**
     * A ZooKeeper handle whose asynchronous creates are answered through the callback {@code answer} makes of the
     * caller's (Curator sends a pipelined create as an asynchronous one).
     */
    private static class AnsweringCreates extends ZooKeeper {
        private final BiFunction<CreateMode, AsyncCallback.Create2Callback, AsyncCallback.Create2Callback> answer;

        AnsweringCreates(
                String connect,
                int sessionMs,
                Watcher watcher,
                boolean canBeReadOnly,
                BiFunction<CreateMode, AsyncCallback.Create2Callback, AsyncCallback.Create2Callback> answer)
                throws IOException {
            super(connect, sessionMs, watcher, canBeReadOnly);
            this.answer = answer;
        }

        @Override
        public void create(
                String path,
                byte[] data,
                List<ACL> acl,
                CreateMode mode,
                AsyncCallback.Create2Callback cb,
                Object ctx,
                long ttl) {
            super.create(path, data, acl, mode, answer.apply(mode, cb), ctx, ttl);
        }
    }

    @Test
    void lock_listsTheQueueBeforeTheCreateIsAnswered_andTakesItsTokenFromTheAnswer() throws Exception {
        AtomicInteger createsUnanswered = new AtomicInteger();
        AtomicBoolean armed = new AtomicBoolean();
        CompletableFuture<Integer> unansweredWhenListed = new CompletableFuture<>();
        ZookeeperFactory recording = (connect, sessionMs, watcher, canBeReadOnly) ->
                new AnsweringCreates(connect, sessionMs, watcher, canBeReadOnly, (mode, cb) -> {
                    createsUnanswered.incrementAndGet();
                    return (rc, p, c, name, stat) -> {
                        createsUnanswered.decrementAndGet();
                        cb.processResult(rc, p, c, name, stat);
                    };
                }) {
                    @Override
                    public List<String> getChildren(String path, Watcher watch, Stat stat)
                            throws KeeperException, InterruptedException {
                        if (armed.get() && path.equals("/pipelined/k")) {
                            unansweredWhenListed.complete(createsUnanswered.get());
                        }
                        return super.getChildren(path, watch, stat);
                    }
                };
        try (CuratorFramework client = client(recording);
                RemoteLocker locker = ZooKeeperLockersTest.startedLocker(client, "/pipelined")) {
            locker.lock("k").close(); // the key's parent nodes exist from here on
            client.create().forPath("/pipelined-hold");
            // Hold ZooKeeper's event thread in a watcher: the create's answer, which it delivers, cannot arrive before
            // the list is read, however the threads are scheduled.
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            client.getData()
                    .usingWatcher((Watcher) event -> {
                        holding.countDown();
                        try {
                            letGo.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    })
                    .forPath("/pipelined-hold");
            client.setData().forPath("/pipelined-hold", new byte[] {1});
            assertThat(holding.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            armed.set(true);
            CompletableFuture<RemoteLock> taking = CompletableFuture.supplyAsync(() -> {
                try {
                    return locker.lock("k");
                } catch (InterruptedException e) {
                    throw new CompletionException(e);
                }
            });
            Integer unanswered;
            try {
                unanswered = unansweredWhenListed.get(WAIT_SECONDS, TimeUnit.SECONDS);
            } finally {
                letGo.countDown();
            }
            assertThat(unanswered)
                    .as("creates sent and not yet answered when the queue was listed")
                    .isEqualTo(1);
            try (RemoteLock lock = taking.get(WAIT_SECONDS, TimeUnit.SECONDS)) {
                assertThat(lock.isHeld()).isTrue();
                String node = client.getChildren().forPath("/pipelined/k").get(0);
                long czxid = client.checkExists()
                        .forPath(ZKPaths.makePath("/pipelined/k", node))
                        .getCzxid();
                assertThat(lock.fencingToken()).hasValue(czxid);
            }
            assertThat(nodesLeft(client, "/pipelined/k")).isEmpty();
        }
    }

    /** The create's answer would be delivered by the thread that takes the lock: the lock must not wait for it. */
    @Test
    void lock_takenInAWatcherOnTheClientsEventThread_isGranted() throws Exception {
        try (CuratorFramework client = client(new DefaultZookeeperFactory());
                RemoteLocker locker = ZooKeeperLockersTest.startedLocker(client, "/in-watcher")) {
            locker.lock("k").close(); // the key's parent nodes exist from here on

            CompletableFuture<Boolean> heldInWatcher = lockInAWatcher(client, locker, new CountDownLatch(1));

            assertThat(heldInWatcher.get(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            assertThat(nodesLeft(client, "/in-watcher/k")).isEmpty();
        }
    }

    /** The waiter's wake-up, the predecessor's deletion event, would come on the very thread that waits. */
    @Test
    void lock_waitingInAWatcherOnTheClientsEventThread_isGrantedOnceTheHolderReleases() throws Exception {
        try (CuratorFramework client = client(new DefaultZookeeperFactory());
                CuratorFramework otherClient = client(new DefaultZookeeperFactory());
                RemoteLocker locker = ZooKeeperLockersTest.startedLocker(client, "/waiting-in-watcher");
                RemoteLocker holder = ZooKeeperLockersTest.startedLocker(otherClient, "/waiting-in-watcher")) {
            RemoteLock held = holder.lock("k");
            CountDownLatch waiting = new CountDownLatch(1);
            CompletableFuture<Boolean> heldInWatcher = lockInAWatcher(client, locker, waiting);
            assertThat(waiting.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            Conditions.await(
                    "the waiter queued",
                    Duration.ofSeconds(WAIT_SECONDS),
                    () -> childCount(otherClient, "/waiting-in-watcher/k") == 2);

            held.release();

            assertThat(heldInWatcher.get(WAIT_SECONDS / 2, TimeUnit.SECONDS)).isTrue();
            assertThat(nodesLeft(client, "/waiting-in-watcher/k")).isEmpty();
        }
    }

    /**
     * Has a watcher of {@code client} take and release the lock of key {@code k}, on the client's event thread: sets a
     * watch on a node of its own and fires it. Completes with whether the lock was held, once it is released.
     */
    private static CompletableFuture<Boolean> lockInAWatcher(
            CuratorFramework client, RemoteLocker locker, CountDownLatch entered) throws Exception {
        String trigger =
                client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/trigger-");
        CompletableFuture<Boolean> heldInWatcher = new CompletableFuture<>();
        client.getData()
                .usingWatcher((Watcher) event -> {
                    entered.countDown();
                    try {
                        boolean wasHeld;
                        try (RemoteLock lock = locker.lock("k", Duration.ofSeconds(WAIT_SECONDS))) {
                            wasHeld = lock.isHeld();
                        }
                        heldInWatcher.complete(wasHeld); // released: its node is gone
                    } catch (Exception | AssertionError e) {
                        heldInWatcher.completeExceptionally(e);
                    }
                })
                .forPath(trigger);
        client.setData().forPath(trigger, new byte[] {1});
        return heldInWatcher;
    }

    private static int childCount(CuratorFramework client, String path) {
        try {
            return client.getChildren().forPath(path).size();
        } catch (Exception e) {
            throw new IllegalStateException("Cannot list " + path, e);
        }
    }

    @Test
    void tryLockAndLock_whenTheCreatesAnswerIsLost_andTheClientRepeatsIt_deleteTheFirstCopy_andGetTheLock()
            throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        AtomicBoolean lostOnce = new AtomicBoolean();
        // The create succeeds on the server, but its answer reports a lost connection: the client's own retry policy
        // sends it again, after the queue was listed.
        ZookeeperFactory losingFirstAnswer = (connect, sessionMs, watcher, canBeReadOnly) -> new AnsweringCreates(
                connect, sessionMs, watcher, canBeReadOnly, (mode, cb) -> (rc, p, c, name, stat) -> {
                    if (mode == CreateMode.EPHEMERAL_SEQUENTIAL && armed.get() && lostOnce.compareAndSet(false, true)) {
                        cb.processResult(KeeperException.Code.CONNECTIONLOSS.intValue(), p, c, null, null);
                    } else {
                        cb.processResult(rc, p, c, name, stat);
                    }
                });
        try (CuratorFramework client = client(losingFirstAnswer);
                RemoteLocker locker = ZooKeeperLockersTest.startedLocker(client, "/repeated")) {
            locker.lock("k").close(); // the key's parent nodes exist from here on
            armed.set(true);
            RemoteLock tried =
                    locker.tryLock("k").orElseThrow(() -> new AssertionError("blocked by our own first node"));
            assertThat(lostOnce).isTrue();
            assertThat(client.getChildren().forPath("/repeated/k")).hasSize(1);
            tried.release();
            lostOnce.set(false);
            // a waiting lock, which reads the queue again after each wake-up, also finds its node behind the copy
            try (RemoteLock waited = locker.lock("k", Duration.ofSeconds(WAIT_SECONDS))) {
                assertThat(lostOnce).isTrue();
                assertThat(waited.isHeld()).isTrue();
                assertThat(client.getChildren().forPath("/repeated/k")).hasSize(1);
            }
            assertThat(nodesLeft(client, "/repeated/k")).isEmpty();
        }
    }
}
