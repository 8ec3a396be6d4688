package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.RedisServers;
import io.distlock.testing.StandardError;
import io.distlock.testing.TcpProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What a server's set-up does to its locks. A Redis that evicts keys at its memory limit ({@code maxmemory} with a
 * {@code maxmemory-policy} other than {@code noeviction}) can evict the key of a held lock: another locker then takes
 * the lock while its holder still believes it holds it, until the holder's next renewal finds the key gone. Nothing a
 * client does prevents it; opening warns about such a master, and the docs say to give locks a Redis that does not
 * evict. A replica takes no write: opening on one is refused, and a master demoted to one (a failover) refuses new
 * locks, each naming it; so is opening on a server that takes no more clients ({@code maxclients}). A master
 * demoted by a failover that moved its address to the promoted replica is reached again at that address.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisServerSetupTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(2).build();

    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;

    @BeforeAll
    static void connect() {
        client = RedisClient.create("redis://" + REDIS.endpoints().get(0));
        connection = client.connect();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        client.shutdown();
    }

    @AfterEach
    void masterAgain() {
        try (StatefulRedisConnection<String, String> second = client.connect(secondUri())) {
            second.sync().replicaofNoOne();
            second.sync().flushall();
        }
    }

    private static RedisURI secondUri() {
        return RedisURI.create("redis://" + REDIS.endpoints().get(1));
    }

    @Test
    void open_onAReplica_isRefusedAtOnceNamingIt() {
        String[] master = REDIS.endpoints().get(0).split(":");
        try (StatefulRedisConnection<String, String> second = client.connect(secondUri())) {
            second.sync().replicaof(master[0], Integer.parseInt(master[1]));
        }
        long asked = System.nanoTime();
        assertThatThrownBy(
                        () -> RemoteLockers.open("redis://" + REDIS.endpoints().get(1)))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining(REDIS.endpoints().get(1) + ": a read-only replica, not a master")
                .hasMessageContaining("give the masters' addresses");
        assertThat(Duration.ofNanos(System.nanoTime() - asked))
                .as("refused at once, not after connectTimeout")
                .isLessThan(TestTimeouts.scaled(Duration.ofSeconds(5)));
    }

    @Test
    void open_onAServerAtItsMaxclients_isRefusedAtOnceNamingIt() {
        RedisCommands<String, String> redis = connection.sync();
        String before = redis.configGet("maxclients").get("maxclients"); // 10000, or less where few files may open
        redis.configSet("maxclients", "1"); // this test's own connection is the one
        try {
            long asked = System.nanoTime();
            assertThatThrownBy(() -> RemoteLockers.open(uri()))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(
                            "the Redis server refused us; " + REDIS.endpoints().get(0)
                                    + ": the server takes no more clients: it has as many as its maxclients allows")
                    .hasMessageNotContaining("Are the servers running");
            assertThat(Duration.ofNanos(System.nanoTime() - asked))
                    .as("refused at once, not after connectTimeout")
                    .isLessThan(TestTimeouts.scaled(Duration.ofSeconds(5)));
        } finally {
            redis.configSet("maxclients", before);
        }
    }

    @Test
    void lock_onAMasterDemotedToAReplica_isRefusedNamingIt() {
        String[] master = REDIS.endpoints().get(0).split(":");
        try (RemoteLocker locker =
                        RemoteLockers.open("redis://" + REDIS.endpoints().get(1));
                StatefulRedisConnection<String, String> second = client.connect(secondUri())) {
            locker.tryLock("before").orElseThrow().release();
            second.sync().replicaof(master[0], Integer.parseInt(master[1])); // a failover demotes it
            assertThatThrownBy(() -> locker.tryLock("after"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("a read-only replica, not a master");
        }
    }

    @Test
    void lock_afterAFailoverMovedTheMastersAddress_reachesTheNewMaster() throws Exception {
        // The locker's address leads, through a proxy, to the first server: then the second is promoted, the first
        // demoted to its replica, and the address moved to the second, as a managed Redis does on a failover.
        String[] first = REDIS.endpoints().get(0).split(":");
        String[] second = REDIS.endpoints().get(1).split(":");
        try (TcpProxy address = TcpProxy.start("failover", Integer.parseInt(first[1]));
                RemoteLocker locker = RemoteLockers.open("redis://" + address.endpoint());
                StatefulRedisConnection<String, String> promoted = client.connect(secondUri())) {
            locker.tryLock("before").orElseThrow().release();
            connection.sync().replicaof(second[0], Integer.parseInt(second[1]));
            address.retarget(new InetSocketAddress(second[0], Integer.parseInt(second[1])));
            try (RemoteLock after = locker.lock("after", TestTimeouts.scaled(Duration.ofSeconds(10)))) {
                assertThat(promoted.sync().get(RedlockSettings.DEFAULT_KEY_PREFIX + "after"))
                        .as("the lock's key on the promoted master")
                        .isNotNull();
            }
        } finally {
            connection.sync().replicaofNoOne();
        }
    }

    @AfterEach
    void unlimited() {
        RedisCommands<String, String> redis = connection.sync();
        redis.configSet("maxmemory", "0");
        redis.configSet("maxmemory-policy", "noeviction");
        redis.flushall();
        redis.configResetstat(); // evicted_keys counts from here
    }

    private static String uri() {
        return "redis://" + REDIS.endpoints().get(0);
    }

    @ParameterizedTest(name = "maxmemory {0}, {1}: warned {2}")
    @CsvSource({
        "100mb, volatile-lru, true",
        "100mb, allkeys-lfu, true",
        "100mb, noeviction, false",
        "0, allkeys-lru, false",
    })
    void open_warnsOnlyAboutAMasterThatEvictsKeys(String maxMemory, String policy, boolean warned) throws Exception {
        connection.sync().configSet("maxmemory", maxMemory);
        connection.sync().configSet("maxmemory-policy", policy);
        String logged = StandardError.during(() -> {
            try (RemoteLocker locker = RemoteLockers.open(uri())) {
                locker.tryLock("opened").orElseThrow().release();
            }
        });
        if (warned) {
            assertThat(logged)
                    .contains("Redis master " + REDIS.endpoints().get(0) + " evicts keys")
                    .contains("maxmemory-policy " + policy)
                    .contains("noeviction");
        } else {
            assertThat(logged).doesNotContain("evicts keys");
        }
    }

    @Test
    void evictingMaster_atItsMemoryLimit_evictsAHeldLocksKey_andASecondLockerTakesTheLock() throws Exception {
        RedisCommands<String, String> redis = connection.sync();
        redis.configSet("maxmemory-policy", "volatile-lru"); // keys with a time to live go first: every lock's key
        Duration leaseTime = TestTimeouts.scaled(Duration.ofSeconds(60)); // no renewal within the test
        try (RemoteLocker first =
                        RemoteLockers.builder().uri(uri()).leaseTime(leaseTime).build();
                RemoteLocker second =
                        RemoteLockers.builder().uri(uri()).leaseTime(leaseTime).build()) {
            RemoteLock held = first.tryLock("evicted").orElseThrow();
            assertThat(second.tryLock("evicted")).isEmpty();

            overTheLimit(redis);
            assertThat(evictedKeys(redis)).as("the lock's key evicted").isEqualTo(1);
            redis.configSet("maxmemory", "0"); // room again (the data shrank, or the limit was raised): writes go on

            Optional<RemoteLock> taken = second.tryLock("evicted");
            assertThat(taken).as("the evicted key's lock taken by another").isPresent();
            assertThat(held.isHeld())
                    .as("while its holder still believes it holds it")
                    .isTrue();
            taken.get().release();
        }
    }

    @Test
    void noevictionMaster_atItsMemoryLimit_refusesNewLocksNamingIt_andKeepsTheHeldOne() throws Exception {
        RedisCommands<String, String> redis = connection.sync();
        redis.configSet("maxmemory-policy", "noeviction");
        Duration leaseTime = TestTimeouts.scaled(Duration.ofSeconds(2));
        try (RemoteLocker locker =
                RemoteLockers.builder().uri(uri()).leaseTime(leaseTime).build()) {
            RemoteLock held = locker.tryLock("kept").orElseThrow();

            overTheLimit(redis);
            assertThat(evictedKeys(redis)).isZero();

            assertThatThrownBy(() -> locker.tryLock("refused"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("OOM command not allowed");
            Thread.sleep(leaseTime.toMillis()); // renewals at the limit: a PEXPIRE takes no memory
            assertThat(held.isHeld()).isTrue();
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
        }
    }

    /**
     * Puts Redis over its memory limit, as an application's data growing would: a limit far below what it uses, and
     * a write, before which Redis evicts what its policy lets it and, still over, refuses the write.
     */
    private static void overTheLimit(RedisCommands<String, String> redis) {
        redis.configSet("maxmemory", "1");
        assertThatThrownBy(() -> redis.set("filler", "x"))
                .isInstanceOf(RedisException.class)
                .hasMessageContaining("OOM");
    }

    private static long evictedKeys(RedisCommands<String, String> redis) {
        for (String line : redis.info("stats").split("\\r?\\n")) {
            if (line.startsWith("evicted_keys:")) {
                return Long.parseLong(line.substring("evicted_keys:".length()).trim());
            }
        }
        return 0;
    }
}
