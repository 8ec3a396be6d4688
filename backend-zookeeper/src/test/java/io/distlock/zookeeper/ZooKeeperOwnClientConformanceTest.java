package io.distlock.zookeeper;

import io.distlock.RemoteLockerBuilder;
import io.distlock.kit.LockHandleContract;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.kit.ProgressContract;
import io.distlock.spi.LockBackendProvider;
import io.distlock.testing.ZooKeeperEnsemble;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's core contracts (exclusion, progress, the lock handle) on lockers made by {@link ZooKeeperLockers#using}
 * from one application client: every locker of a test shares its session, and none closes it.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ZooKeeperOwnClientConformanceTest implements MutualExclusionContract, ProgressContract, LockHandleContract {

    private static final String BASE = "/own-client-kit";

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private static CuratorFramework client;

    @BeforeAll
    static void connect() throws InterruptedException {
        client = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @Override
    public String lockerUri() {
        return "zk://" + ZK.connectString() + BASE;
    }

    @Override
    public RemoteLockerBuilder lockerBuilder() {
        // the servers' tick: opening on an application's client confirms its session, half a tick (ZooKeeperLockersTest
        // opens with the default)
        return ZooKeeperLockers.using(client, BASE)
                .option(ZooKeeperLockOptions.TICK_TIME, ZooKeeperEnsemble.TICK.toMillis() + "ms");
    }

    @Override
    public LockBackendProvider provider() {
        return new ApplicationClientProvider(client, ZkLocation.ofClient(ZK.connectString(), BASE));
    }

    @Override
    public MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.unsupported("the application's client lives in this process only");
    }
}
