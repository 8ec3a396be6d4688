package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.kit.TestTimeouts;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tests' reads of an ensemble see what another client has just written through another server. Without the sync,
 * a follower answered about 2.5 % of such reads from before the write on our machines, which is how the kit's "nothing
 * left behind" check once found no node under a held key.
 */
class SyncedReadsTest {

    private static final int WRITES = 1000;

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(3).build();

    @Test
    void children_readThroughAFollower_includeWhatWasJustCreatedThroughTheLeader() throws Exception {
        int leader = ZK.serverIn("leader");
        int follower = (leader + 1) % 3;
        try (CuratorFramework writer = connected(ZK.server(leader).endpoint());
                CuratorFramework reader = connected(ZK.server(follower).endpoint())) {
            List<Integer> missed = new ArrayList<>();
            for (int i = 0; i < WRITES; i++) {
                String parent = "/synced/" + i;
                writer.create().creatingParentsIfNeeded().forPath(ZKPaths.makePath(parent, "node"));
                if (!SyncedReads.children(reader, parent).contains("node")) {
                    missed.add(i);
                }
            }
            assertThat(missed)
                    .as("writes the follower's reader did not see right after they were made")
                    .isEmpty();
        }
    }

    /**
     * While the reader's only server is down, the synced read waits for it to come back, as any Curator read does,
     * instead of failing at once with a connection loss. The kit's "nothing left behind" check, right after a majority
     * of the ensemble came back, once failed that way while its client was still reconnecting.
     */
    @Test
    void children_whileTheReadersServerIsDown_waitForItToComeBack() throws Exception {
        int follower = ZK.serverIn("follower");
        try (CuratorFramework writer = connected(ZK.connectString());
                CuratorFramework reader = connected(ZK.server(follower).endpoint())) {
            writer.create().creatingParentsIfNeeded().forPath("/restarted/node");
            ZK.server(follower).stop();
            CompletableFuture<Void> back = CompletableFuture.runAsync(
                    ZK.server(follower)::restart, CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS));
            try {
                assertThat(SyncedReads.children(reader, "/restarted")).containsExactly("node");
            } finally {
                back.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private static CuratorFramework connected(String endpoint) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(endpoint, new RetryOneTime(100));
        client.start();
        client.blockUntilConnected();
        return client;
    }
}
