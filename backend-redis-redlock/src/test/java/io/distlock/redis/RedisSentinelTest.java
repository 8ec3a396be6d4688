package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.RedisServers;
import io.distlock.testing.StandardError;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A master found through Redis Sentinel ({@code redis-sentinel://sentinels/name}), as a Redis with automatic failover
 * is run: the locker asks a sentinel for the master's address at every connection, so after a failover its locks
 * reach the promoted replica. Two servers, the second a replica of the first, and one sentinel with a quorum of one.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisSentinelTest {

    private static final String MASTER = "locks";

    /** The sentinel's own password ({@code requirepass}); the servers ask for none. */
    private static final String SENTINEL_PASSWORD = "sentinel-" + UUID.randomUUID();

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder()
            .servers(2)
            .sentinel(MASTER)
            .sentinelPassword(SENTINEL_PASSWORD)
            .build();

    private static RedisClient client;

    @BeforeAll
    static void client() {
        client = RedisClient.create();
    }

    @AfterAll
    static void shutdown() {
        client.shutdown();
    }

    @Test
    void locks_reachTheMasterTheSentinelsName_andAfterAFailoverThePromotedReplica() throws Exception {
        String first = REDIS.endpoints().get(0);
        String second = REDIS.endpoints().get(1);
        assertThat(REDIS.sentinelMasterEndpoint()).isEqualTo(first);
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker locker = RemoteLockers.open(sentinelUri(MASTER) + "&ttl=" + ttl.toMillis() + "ms");
                StatefulRedisConnection<String, String> firstServer =
                        client.connect(RedisURI.create("redis://" + first));
                StatefulRedisConnection<String, String> secondServer =
                        client.connect(RedisURI.create("redis://" + second));
                StatefulRedisSentinelConnection<String, String> sentinel = client.connectSentinel(
                        RedisURI.create("redis://" + SENTINEL_PASSWORD + "@" + REDIS.sentinelEndpoint()))) {
            try (RemoteLock before = locker.lock("before", TestTimeouts.scaled(Duration.ofSeconds(10)))) {
                assertThat(firstServer.sync().get(RedlockSettings.DEFAULT_KEY_PREFIX + "before"))
                        .as("the lock's key on the master the sentinel named")
                        .isNotNull();
            }
            RemoteLock held = locker.lock("held", TestTimeouts.scaled(Duration.ofSeconds(10)));
            String heldKey = RedlockSettings.DEFAULT_KEY_PREFIX + "held";
            Deadlines.await(
                    () -> secondServer.sync().get(heldKey) != null,
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
                    () -> "the held lock's key never reached the replica");

            // Promotes the replica at once; makes the first server its replica at the sentinel's next look at it (every
            // 10 s): until then the first still answers as a master, and the locker's commands go there
            sentinel.sync().failover(MASTER);
            Deadlines.await(
                    () -> second.equals(REDIS.sentinelMasterEndpoint())
                            && firstServer.sync().info("replication").contains("role:slave"),
                    TestTimeouts.scaled(Duration.ofSeconds(30)),
                    () -> "the sentinel did not fail over to " + second + ": it names "
                            + REDIS.sentinelMasterEndpoint());

            try (RemoteLock after = locker.lock("after", TestTimeouts.scaled(Duration.ofSeconds(20)))) {
                assertThat(secondServer.sync().get(RedlockSettings.DEFAULT_KEY_PREFIX + "after"))
                        .as("the lock's key on the promoted replica")
                        .isNotNull();
                assertThat(after.isHeld()).isTrue();
            }

            // The lock held across the failover: renewed on the promoted replica if its key is there, else (the
            // renewals went to the old master until the sentinel demoted it, and were lost with its writes) told lost
            // within a lease, never held while its key is gone from the master
            Deadlines.await(
                    () -> !held.isHeld() || secondServer.sync().pttl(heldKey) > 0,
                    ttl.multipliedBy(2),
                    () -> "the held lock is neither lost nor on the promoted replica");
            if (held.isHeld()) {
                assertThat(secondServer.sync().get(heldKey))
                        .as("the held lock's key there")
                        .isNotNull();
            }
            held.release();
            assertThat(secondServer.sync().get(heldKey)).as("released there").isNull();
        }
    }

    @Test
    void aLockerOnTheApplicationsClient_findsTheMasterThroughItsSentinelUri() throws Exception {
        String[] sentinel = REDIS.sentinelEndpoint().split(":");
        RedisURI uri = RedisURI.Builder.sentinel(sentinel[0], Integer.parseInt(sentinel[1]), MASTER, SENTINEL_PASSWORD)
                .build();
        try (RemoteLocker locker = RedisLockers.using(client, uri).build();
                StatefulRedisConnection<String, String> master =
                        client.connect(RedisURI.create("redis://" + REDIS.sentinelMasterEndpoint()))) {
            try (RemoteLock lock = locker.lock("app", TestTimeouts.scaled(Duration.ofSeconds(10)))) {
                assertThat(master.sync().get(RedlockSettings.DEFAULT_KEY_PREFIX + "app"))
                        .isNotNull();
            }
        }
    }

    @Test
    void aMasterNameTheSentinelsDoNotWatch_isRefusedAtOpening_namingIt() {
        assertThatThrownBy(() -> RemoteLockers.open(sentinelUri("nosuch")))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("master 'nosuch' of sentinels " + REDIS.sentinelEndpoint())
                .hasMessageContaining("the sentinels watch no master of that name")
                .hasMessageNotContaining("reachable");
    }

    @Test
    void sentinelsThatAskForAPassword_refuseALockerWithoutOne_namingTheOption() throws Exception {
        String logged = StandardError.during(() -> assertThatThrownBy(
                        () -> RemoteLockers.open("redis-sentinel://" + REDIS.sentinelEndpoint() + "/" + MASTER))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("sentinel")
                .hasMessageContaining("sentinelPassword")
                .hasMessageNotContaining("reachable"));
        assertThat(logged).doesNotContain(SENTINEL_PASSWORD);
    }

    @Test
    void badSentinelUrisAndOptions_areRefusedNamingTheProblem() {
        String sentinels = "redis-sentinel://" + REDIS.sentinelEndpoint();
        assertThatThrownBy(() -> RemoteLockers.open(sentinels))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("names no master")
                .hasMessageContaining("redis-sentinel://s1:26379,s2:26379,s3:26379/mymaster");
        assertThatThrownBy(() -> RemoteLockers.open(sentinels + "/a/b"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("holds a '/'");
        assertThatThrownBy(
                        () -> RemoteLockers.open("redis://" + REDIS.endpoints().get(0) + "?sentinelPassword=x"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("are for a master found through Redis Sentinel");
        assertThatThrownBy(() -> RemoteLockers.open(
                        "redis-sentinel://" + REDIS.sentinelEndpoint() + "/" + MASTER + "?sentinelUser=ops"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Option 'sentinelUser' needs a password");
    }

    private static String sentinelUri(String master) {
        return "redis-sentinel://" + REDIS.sentinelEndpoint() + "/" + master + "?sentinelPassword=" + SENTINEL_PASSWORD;
    }
}
