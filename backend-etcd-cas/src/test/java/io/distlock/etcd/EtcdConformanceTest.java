package io.distlock.etcd;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit against one etcd member, mode=fair (the default). */
class EtcdConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(1).build();

    @Override
    public String lockerUri() {
        return EtcdTesting.uri(ETCD, "/kit");
    }

    @Override
    public Duration sessionTimeout() {
        return EtcdTesting.sessionTimeout(shortLeaseTime());
    }
}
