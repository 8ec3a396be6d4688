package io.distlock.zookeeper;

import io.distlock.RemoteLockers;
import io.distlock.kit.ClientPartition;
import io.distlock.kit.NodeFaults;
import io.distlock.kit.StoreFaults;
import io.distlock.testing.KitFaults;
import io.distlock.testing.ServerNode;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;

/**
 * The kit's store faults on a {@link ZooKeeperEnsemble}: every server stopped and started again, a lock node deleted
 * with a client of its own, as {@code zkCli.sh delete} would, single servers killed (a majority serves), and lockers
 * cut off through the ensemble's proxies. The servers run in the test's JVM, so none can be paused alone.
 */
final class ZkStoreFaults implements StoreFaults {

    /**
     * The owned node's watch is set at most 200 ms after the grant and fires on the deletion; the rest is the event's
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
            List<String> nodes = SyncedReads.children(operator, lockPath);
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

    @Override
    public Optional<NodeFaults> nodeFaults() {
        List<ServerNode> servers = ensemble.nodes();
        return servers.size() < 3
                ? Optional.empty()
                : Optional.of(KitFaults.nodes(servers, KitFaults.majority(servers), ensemble::resetFaults));
    }

    @Override
    public Optional<ClientPartition> clientPartition() {
        return Optional.of(KitFaults.partition(ensemble.nodes(), () -> RemoteLockers.builder()
                .uri("zk://" + ensemble.proxiedConnectString() + basePath)));
    }
}
