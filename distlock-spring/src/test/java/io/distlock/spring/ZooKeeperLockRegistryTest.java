package io.distlock.spring;

import io.distlock.testing.ZooKeeperEnsemble;
import java.util.Comparator;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The registry on a real ZooKeeper server (a session backend). */
class ZooKeeperLockRegistryTest extends LockRegistryContract {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    @Override
    String uri() {
        return "zk://" + ZK.connectString() + "/registry";
    }

    @Override
    void deleteBehindHolder(String key) throws Exception {
        deleteHolderNode(ZK, "/registry/" + key);
    }

    /** Deletes the first node of a lock's queue (its holder's), leaving the waiters' nodes. */
    static void deleteHolderNode(ZooKeeperEnsemble zk, String lockPath) throws Exception {
        try (CuratorFramework operator = CuratorFrameworkFactory.newClient(zk.connectString(), new RetryOneTime(100))) {
            operator.start();
            List<String> nodes = operator.getChildren().forPath(lockPath);
            String holder = nodes.stream()
                    .min(Comparator.comparing(n -> n.substring(n.length() - 10))) // the sequence number
                    .orElseThrow(() -> new AssertionError("no lock node under " + lockPath));
            operator.delete().forPath(lockPath + "/" + holder);
        }
    }
}
