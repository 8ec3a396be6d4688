package io.distlock.shedlock;

import io.distlock.testing.ZooKeeperEnsemble;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's scenarios on one ZooKeeper server ({@code zk://}: a session lease, the fixed end kept by the locker). */
class ZooKeeperLockProviderTest extends LockProviderScenarios {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(1).build();

    @Override
    String lockerUri() {
        return "zk://" + ZK.connectString() + "/shedlock";
    }
}
