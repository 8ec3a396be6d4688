package io.distlock.zookeeper;

import java.util.List;
import org.apache.curator.RetryLoop;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * Reads of an ensemble by a test's own client that see every write the backend has completed. The test's client and
 * the backend's may be connected to different servers, and a follower answers reads from what it has applied, which
 * can lag a write the leader has already committed; a {@code sync} first makes the test's server catch up with the
 * leader. The sync goes through Curator's retry loop, as Curator's own reads do: a test's client may still be
 * reconnecting after a fault the test made, and the loop waits for the connection (up to the client's connection
 * timeout) and retries a lost one by the client's retry policy instead of failing at once.
 */
final class SyncedReads {

    private SyncedReads() {}

    /** The children of {@code path} after a sync; an empty list when the node does not exist. */
    static List<String> children(CuratorFramework client, String path) throws Exception {
        RetryLoop.callWithRetry(client.getZookeeperClient(), () -> {
            client.getZookeeperClient().getZooKeeper().sync("/");
            return null;
        });
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }
}
