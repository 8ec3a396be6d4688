package io.distlock.spring;

import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The leader initiator on a real ZooKeeper server, where the lock's lease is the session. */
class ZooKeeperLeaderInitiatorTest extends DistlockLeaderInitiatorContract {

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    @Override
    String uri(Duration ttl) {
        return "zk://" + ZK.connectString() + "/leader?ttl=" + ttl.toSeconds() + "s";
    }
}
