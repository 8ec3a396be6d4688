package io.distlock.etcd;

import io.distlock.testing.EtcdCluster;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit against a 3-member etcd cluster, mode=cas. */
class EtcdClusterCasConformanceTest extends EtcdKit {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    @Override
    EtcdLockMode mode() {
        return EtcdLockMode.CAS;
    }
}
