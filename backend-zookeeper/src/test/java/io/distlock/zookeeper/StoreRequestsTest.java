package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The request counter behind the benchmark's "store requests per acquisition". */
class StoreRequestsTest {

    private static TestingServer server;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void storeRequests_freeLock_countsCreateChildrenAndDelete() throws Exception {
        CapturingProvider provider = new CapturingProvider();
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("zk://" + server.getConnectString() + "/requests")
                .provider(provider)
                .build()) {
            locker.lock("warm").close(); // the key's parent nodes are created on first use
            long before = provider.opened().storeRequests().orElseThrow();
            for (int i = 0; i < 5; i++) {
                try (RemoteLock lock = locker.lock("warm")) {
                    assertThat(lock.isHeld()).isTrue();
                }
            }
            // each: create the node, list the children (ours is first), delete the node; and the watch on the held
            // node if it was still held when the batch of watches was set (at most 50 ms after the grant)
            assertThat(provider.opened().storeRequests().orElseThrow() - before).isBetween(15L, 20L);
        }
    }
}
