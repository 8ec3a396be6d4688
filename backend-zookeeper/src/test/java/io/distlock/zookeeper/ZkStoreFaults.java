package io.distlock.zookeeper;

import io.distlock.kit.StoreFaults;
import io.distlock.testing.ServerNode;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;

/**
 * The kit's store faults on a {@link ZooKeeperEnsemble}: every server stopped and started again, and a lock node
 * deleted with a client of its own, as {@code zkCli.sh delete} would.
 */
final class ZkStoreFaults implements StoreFaults {

    /**
     * The owned node's watch is set at most 50 ms after the grant and fires on the deletion; the rest is the event's
     * way to the holder and the listener's executor.
     */
    private static final Duration NOTICED_WITHIN = Duration.ofSeconds(1);

    private final ZooKeeperEnsemble ensemble;
    private final String basePath;

    ZkStoreFaults(ZooKeeperEnsemble ensemble, String basePath) {
        this.ensemble = ensemble;
        this.basePath = basePath;
    }

    @Override
    public void stopStore() {
        ensemble.nodes().forEach(ServerNode::stop);
    }

    @Override
    public void startStore() {
        ensemble.resetFaults();
    }

    /** Deletes every node under the key's lock path: the holder's (the kit deletes only where nobody waits). */
    @Override
    public void deleteLockEntry(String key) {
        try (CuratorFramework operator =
                CuratorFrameworkFactory.newClient(ensemble.connectString(), new RetryOneTime(100))) {
            operator.start();
            operator.blockUntilConnected();
            String lockPath = ZKPaths.makePath(basePath, KeyCodec.encode(key));
            List<String> nodes = operator.getChildren().forPath(lockPath);
            if (nodes.isEmpty()) {
                throw new IllegalStateException("No lock node under " + lockPath + " to delete");
            }
            for (String node : nodes) {
                operator.delete().forPath(ZKPaths.makePath(lockPath, node));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted deleting the lock node of '" + key + "'", e);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot delete the lock node of '" + key + "'", e);
        }
    }

    @Override
    public Duration deletionNoticedWithin() {
        return NOTICED_WITHIN;
    }
}
