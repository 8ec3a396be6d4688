package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.testing.RedisServers;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A node of a Redis Cluster given as a master: it serves only the keys of its own hash slots, answering {@code MOVED}
 * (another node serves the slot) or {@code CLUSTERDOWN} (nobody does) for the others. distlock locks on standalone
 * masters; the failure says so, where it said "too few Redis masters answered" and asked whether the servers were
 * running.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisClusterNodeTest {

    /** The default key prefix (option keyPrefix). */
    private static final String KEY_PREFIX = "distlock:";

    /** How long a waiter goes on while too few masters answer (option connectTimeout): far longer than a refusal. */
    private static final Duration OUTAGE_LIMIT = Duration.ofSeconds(40);

    @RegisterExtension
    static final RedisServers REDIS =
            RedisServers.builder().servers(2).clusterNodes().build();

    @Test
    void clusterNodes_asMasters_areRefusedNamingTheCluster() throws Exception {
        String first = REDIS.endpoints().get(0);
        // Serving no slot yet: every key is CLUSTERDOWN, opening's access check too
        assertThatThrownBy(() -> RemoteLockers.open("redis://" + first))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining(first + ": a node of a Redis Cluster")
                .hasMessageContaining("CLUSTERDOWN")
                .hasMessageNotContaining("reachable");

        // Two nodes, half the slots each: the keys of the other half are MOVED
        String secondEndpoint = REDIS.endpoints().get(1);
        String[] second = secondEndpoint.split(":");
        RedisClient client = RedisClient.create();
        try (StatefulRedisConnection<String, String> a = client.connect(RedisURI.create("redis://" + first));
                StatefulRedisConnection<String, String> b =
                        client.connect(RedisURI.create("redis://" + secondEndpoint))) {
            a.sync().clusterAddSlotsRange(Range.create(0, 8191));
            b.sync().clusterAddSlotsRange(Range.create(8192, 16383));
            a.sync().clusterMeet(second[0], Integer.parseInt(second[1]));
            awaitClusterOk(a.sync());
            boolean probeOnFirst =
                    a.sync().clusterKeyslot(KEY_PREFIX + RedisLockBackendProvider.ACCESS_CHECK_KEY) <= 8191;
            String serving = probeOnFirst ? first : secondEndpoint;
            String other = probeOnFirst ? secondEndpoint : first;
            assertThatThrownBy(() -> RemoteLockers.open("redis://" + other))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(other + ": a node of a Redis Cluster")
                    .hasMessageContaining("MOVED");
            try (RemoteLocker locker =
                    RemoteLockers.open("redis://" + serving + "?connectTimeout=" + OUTAGE_LIMIT.toSeconds() + "s")) {
                String elsewhere = probeOnFirst ? nameInSlots(a.sync(), 8192, 16383) : nameInSlots(a.sync(), 0, 8191);
                assertThatThrownBy(() -> locker.tryLock(elsewhere))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("a node of a Redis Cluster")
                        .hasMessageContaining("MOVED")
                        .hasMessageContaining(Redlock.REFUSED_FOR_GOOD);
                // A waiter fails as soon: a MOVED does not pass, however long it waits (it used to wait out
                // connectTimeout, as for masters that do not answer)
                long start = System.nanoTime();
                assertThatThrownBy(() -> locker.lock(elsewhere, Duration.ofMinutes(2)))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("a node of a Redis Cluster")
                        .hasMessageContaining("MOVED")
                        .hasMessageContaining(Redlock.REFUSED_FOR_GOOD);
                assertThat(Duration.ofNanos(System.nanoTime() - start))
                        .as("a waiter refused with MOVED fails before connectTimeout")
                        .isLessThan(OUTAGE_LIMIT);
            }
        } finally {
            client.shutdown();
        }
    }

    private static void awaitClusterOk(RedisCommands<String, String> node) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!node.clusterInfo().contains("cluster_state:ok")) {
            if (System.nanoTime() > end) {
                throw new AssertionError("the two-node cluster never came up: " + node.clusterInfo());
            }
            Thread.sleep(50);
        }
    }

    /** A lock name whose key's hash slot lies in {@code from..to}. */
    private static String nameInSlots(RedisCommands<String, String> node, long from, long to) {
        for (int i = 0; ; i++) {
            long slot = node.clusterKeyslot(KEY_PREFIX + "k" + i);
            if (slot >= from && slot <= to) {
                return "k" + i;
            }
        }
    }
}
