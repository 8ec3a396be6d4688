package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.kit.NodeFaults;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's store faults on masters that keep nothing on disk follow seed 002's delayed restart: a master stopped or
 * killed comes back only once the keys it held have expired, so a kit run never sees a lock forgotten by a restart
 * (which the seed rules out, and {@link RedlockPersistenceTest} shows giving a lock two holders).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RedisStoreFaultsTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().build();

    /** Far longer than any key these tests set: a fallback to it would not go unseen. */
    private static final Duration LONGEST_LEASE = Duration.ofSeconds(40);

    private static final Duration TTL = Duration.ofMillis(1500);

    private static RedisProbe probe;

    @BeforeAll
    static void probe() {
        probe = new RedisProbe(REDIS.endpoints());
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    @Test
    void longestTtl_isTheLongestLeftOfAKeyUnderThePrefix_andWritesWaitMeanwhile() throws Exception {
        String key = "distlock:" + RedisProbe.uniqueKey("ttl-long");
        probe.set(0, key, "a", TTL);
        probe.set(0, "distlock:" + RedisProbe.uniqueKey("ttl-short"), "b", Duration.ofMillis(300));
        probe.set(0, RedisProbe.uniqueKey("other-prefix"), "c", Duration.ofSeconds(30));

        Duration longest = probe.holdWritesAndLongestTtl(0, "distlock:", Duration.ofSeconds(1));

        assertThat(longest).isBetween(Duration.ofMillis(500), TTL);
        try (RedisProbe other = new RedisProbe(REDIS.endpoints())) {
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> other.delete(0, key));
            Thread.sleep(300);
            assertThat(write).as("a write while writes are held").isNotDone();
            write.get(5, TimeUnit.SECONDS);
        }
        assertThat(probe.exists(0, key)).isFalse();
    }

    @Test
    void storeRestart_waitsUntilTheKeysTheMasterHeldHaveExpired() {
        RedisStoreFaults faults = new RedisStoreFaults(REDIS, probe, LONGEST_LEASE);
        long set = System.nanoTime();
        probe.set(0, "distlock:" + RedisProbe.uniqueKey("restart"), "a", TTL);

        faults.stopStore();
        faults.startStore();

        assertThat(Duration.ofNanos(System.nanoTime() - set))
                .as("time from the key's SET to the master's return")
                .isGreaterThanOrEqualTo(TTL)
                .isLessThan(LONGEST_LEASE);
        assertThat(REDIS.node(0).isRunning()).isTrue();
    }

    @Test
    void killedNode_isRestoredOnlyOnceTheKeysItHeldHaveExpired() {
        NodeFaults nodes =
                new RedisStoreFaults(REDIS, probe, LONGEST_LEASE).nodeFaults().orElseThrow();
        long set = System.nanoTime();
        probe.set(0, "distlock:" + RedisProbe.uniqueKey("kill"), "a", TTL);

        nodes.kill(0);
        nodes.restoreAll();

        assertThat(Duration.ofNanos(System.nanoTime() - set))
                .as("time from the key's SET to the master's return")
                .isGreaterThanOrEqualTo(TTL)
                .isLessThan(LONGEST_LEASE);
        assertThat(REDIS.node(0).isRunning()).isTrue();
    }
}
