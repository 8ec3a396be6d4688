package io.distlock.shedlock;

import io.distlock.testing.EtcdCluster;
import io.distlock.testing.ServerNode;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's scenarios on one etcd member, in both lock modes ({@code mode=cas} and {@code mode=fair}). */
class EtcdLockProviderTest {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(1).build();

    static String uri(String mode) {
        return "etcd://" + ETCD.nodes().stream().map(ServerNode::endpoint).collect(Collectors.joining(","))
                + "/shedlock?mode=" + mode;
    }

    @Nested
    class Cas extends LockProviderScenarios {
        @Override
        String lockerUri() {
            return uri("cas");
        }
    }

    @Nested
    class Fair extends LockProviderScenarios {
        @Override
        String lockerUri() {
            return uri("fair");
        }
    }
}
