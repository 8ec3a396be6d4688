package io.distlock.etcd;

import io.distlock.testing.EtcdCluster;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit against one etcd member, mode=fair (the default). */
class EtcdConformanceTest extends EtcdKit {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(1).build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    @Override
    EtcdLockMode mode() {
        return EtcdLockMode.FAIR;
    }
}
