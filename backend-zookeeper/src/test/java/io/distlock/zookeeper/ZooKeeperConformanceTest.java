package io.distlock.zookeeper;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.testing.ZooKeeperEnsemble;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit against one ZooKeeper server. */
class ZooKeeperConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    @Override
    public String lockerUri() {
        return "zk://" + ZK.connectString() + "/kit";
    }
}
