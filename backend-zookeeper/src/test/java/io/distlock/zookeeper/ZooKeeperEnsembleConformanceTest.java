package io.distlock.zookeeper;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.StoreFaults;
import io.distlock.testing.ZooKeeperEnsemble;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against a 3-server ZooKeeper ensemble, with the kit's node faults. There is no one-server kit
 * class: the client sends one server the same requests, and a whole ensemble stopped looks to it as one server
 * stopped; one server is exercised by the secured and application-client kit classes and {@code ZooKeeperLockTest}.
 */
class ZooKeeperEnsembleConformanceTest extends LockerConformanceTests {

    private static final String BASE = "/kit";

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(3).build();

    /** Reads the lock nodes for the kit's "nothing left behind" checks, beside the backend's own client. */
    private static CuratorFramework curator;

    @BeforeAll
    static void connect() throws InterruptedException {
        curator = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100));
        curator.start();
        curator.blockUntilConnected();
    }

    @AfterAll
    static void disconnect() {
        curator.close();
    }

    @Override
    public String lockerUri() {
        return "zk://" + ZK.connectString() + BASE;
    }

    /** Port 1 on loopback: nothing listens there. */
    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("zk://127.0.0.1:1" + BASE);
    }

    @Override
    public Optional<StoreFaults> storeFaults() {
        return Optional.of(new ZkStoreFaults(ZK, BASE));
    }

    /** The queue nodes under the key's node, the holder's and any waiter's, as the leader has them. */
    @Override
    public Optional<List<String>> storeEntries(String key) {
        try {
            return Optional.of(SyncedReads.children(curator, ZKPaths.makePath(BASE, KeyCodec.encode(key))));
        } catch (Exception e) {
            throw new IllegalStateException("Cannot list the lock nodes of '" + key + "'", e);
        }
    }
}
