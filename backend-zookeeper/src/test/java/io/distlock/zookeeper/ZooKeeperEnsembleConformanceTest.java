package io.distlock.zookeeper;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.StoreFaults;
import io.distlock.testing.ZooKeeperEnsemble;
import java.util.Optional;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit against a 3-server ZooKeeper ensemble. */
class ZooKeeperEnsembleConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(3).build();

    @Override
    public String lockerUri() {
        return "zk://" + ZK.connectString() + "/kit";
    }

    @Override
    public Optional<StoreFaults> storeFaults() {
        return Optional.of(new ZkStoreFaults(ZK, "/kit"));
    }
}
