package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The few ZooKeeper operations the lock needs, as Curator background calls completing a future. Background calls let
 * the caller stop waiting at its own deadline while the call goes on; whoever abandons a call that creates a node must
 * delete that node when the call completes (see {@link LockAttempt}).
 */
final class ZkCalls {

    /** Curator's lock node name ({@code InterProcessMutex}'s {@code LOCK_NAME}); the sequence number follows it. */
    static final String LOCK_NAME = "lock-";

    private final CuratorFramework client;

    ZkCalls(CuratorFramework client) {
        this.client = client;
    }

    CuratorFramework client() {
        return client;
    }

    /**
     * Creates an ephemeral sequential lock node {@code lockPath/_c_<uuid>-lock-<seq>}, creating missing parents as
     * container nodes (which the server deletes once empty). Curator's protection handles a reply lost after the
     * server created the node: the retry finds the node by its UUID instead of creating a second one, and a node
     * whose creation finally fails is deleted in the background.
     */
    CompletableFuture<CuratorEvent> createLockNode(String lockPath, byte[] data, Stat stat) {
        return call(cb -> client.create()
                .storingStatIn(stat)
                .creatingParentContainersIfNeeded()
                .withProtection()
                .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .inBackground(cb)
                .forPath(lockPath + "/" + LOCK_NAME, data));
    }

    CompletableFuture<CuratorEvent> children(String path) {
        return call(cb -> client.getChildren().inBackground(cb).forPath(path));
    }

    /** Reads {@code path} and leaves {@code watcher} on it; {@code getData} rather than {@code exists}, as Curator
     * does, so that no watch is left on a node that is already gone. */
    CompletableFuture<CuratorEvent> watchData(String path, Watcher watcher) {
        return call(
                cb -> client.getData().usingWatcher(watcher).inBackground(cb).forPath(path));
    }

    CompletableFuture<CuratorEvent> exists(String path) {
        return call(cb -> client.checkExists().inBackground(cb).forPath(path));
    }

    /** Deletes {@code path}; guaranteed: if the connection fails, Curator retries in the background until it works. */
    CompletableFuture<CuratorEvent> delete(String path) {
        return call(cb -> client.delete().guaranteed().inBackground(cb).forPath(path));
    }

    private interface Start {
        void start(BackgroundCallback callback) throws Exception;
    }

    private static CompletableFuture<CuratorEvent> call(Start start) {
        CompletableFuture<CuratorEvent> result = new CompletableFuture<>();
        try {
            start.start((client, event) -> result.complete(event));
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /**
     * Waits for {@code call} until {@code deadline}.
     *
     * @throws TimeoutException if the deadline passed first (the call goes on)
     * @throws KeeperException if the call failed
     */
    static CuratorEvent await(CompletableFuture<CuratorEvent> call, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        CuratorEvent event;
        try {
            if (!deadline.isBounded()) {
                event = call.get();
            } else {
                long left = deadline.remainingNanos();
                if (left <= 0 && !call.isDone()) {
                    throw new TimeoutException();
                }
                event = call.get(Math.max(0, left), TimeUnit.NANOSECONDS);
            }
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof KeeperException ke) {
                throw ke;
            }
            throw new LockBackendException("A ZooKeeper call failed: " + cause, cause);
        }
        return event;
    }

    /** Whether the call succeeded; {@code NONODE} is returned as false, any other error thrown. */
    static boolean ok(CuratorEvent event) throws KeeperException {
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code == KeeperException.Code.OK) {
            return true;
        }
        if (code == KeeperException.Code.NONODE) {
            return false;
        }
        throw KeeperException.create(code, event.getPath());
    }
}
