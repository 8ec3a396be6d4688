package io.distlock.etcd;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit against a 3-member etcd cluster, mode=fair. */
class EtcdClusterConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();

    @Override
    public String lockerUri() {
        return EtcdTesting.uri(ETCD, "/kit");
    }

    @Override
    public Duration sessionTimeout() {
        return EtcdTesting.sessionTimeout(shortLeaseTime());
    }
}
