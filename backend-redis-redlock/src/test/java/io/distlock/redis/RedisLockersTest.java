package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.kit.Deadlines;
import io.distlock.kit.LeaseContract;
import io.distlock.kit.LockHandleContract;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.kit.ProgressContract;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.LockBackendProvider;
import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lockers on the application's own Lettuce clients ({@link RedisLockers}), configured by the application for the
 * secured servers (TLS, client certificate, ACL user): the kit's core contracts through them, and closing a locker
 * leaves the clients open and usable.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RedisLockersTest {

    static final TestPki PKI = SecuredRedis.pki("redis-lockers");

    @RegisterExtension
    static final RedisServers REDIS = SecuredRedis.servers(PKI, 3);

    private static final List<RedisClient> CLIENTS = new ArrayList<>();
    private static RedisProbe probe;

    @BeforeAll
    static void clients() {
        for (String endpoint : REDIS.endpoints()) {
            CLIENTS.add(applicationClient(uri(endpoint)));
        }
        probe = SecuredRedis.probe(REDIS, PKI);
    }

    @AfterAll
    static void shutdown() {
        probe.close();
        CLIENTS.forEach(RedisClient::shutdown);
    }

    /** How an application reaches a secured master: TLS, ACL user. */
    private static RedisURI uri(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        return RedisURI.builder()
                .withHost(endpoint.substring(0, colon))
                .withPort(Integer.parseInt(endpoint.substring(colon + 1)))
                .withSsl(true)
                .withVerifyPeer(SslVerifyMode.FULL)
                .withAuthentication(SecuredRedis.LOCKER, SecuredRedis.LOCKER_PASSWORD)
                .withTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** The application's client, with its TLS options. */
    private static RedisClient applicationClient(RedisURI uri) {
        RedisClient client = RedisClient.create(uri);
        client.setOptions(SecuredRedis.clientOptions(PKI, "application"));
        return client;
    }

    /** The client still serves the application: a connection it held before, and a new one. */
    private static void assertUsable(RedisClient client, StatefulRedisConnection<String, String> held) {
        assertThat(held.isOpen()).isTrue();
        assertThat(held.sync().set("distlock:app-" + System.nanoTime(), "v", io.lettuce.core.SetArgs.Builder.px(1)))
                .isEqualTo("OK");
        try (StatefulRedisConnection<String, String> fresh = client.connect()) {
            assertThat(fresh.sync().get("distlock:nothing")).isNull();
        }
    }

    /** The kit's core contracts on one instance, through the application's client and its default URI. */
    @Nested
    class OneInstanceKit implements MutualExclusionContract, LeaseContract, ProgressContract, LockHandleContract {

        @Override
        public String lockerUri() {
            return "redis://application-client";
        }

        @Override
        public RemoteLockerBuilder lockerBuilder() {
            return RedisLockers.using(CLIENTS.get(0));
        }

        @Override
        public LockBackendProvider provider() {
            return new ApplicationClientProvider(
                    lockerUri(),
                    List.of(new ApplicationClientProvider.Target(
                            "master", new ApplicationClient(CLIENTS.get(0), Optional.empty()))));
        }

        @Override
        public Optional<List<String>> storeEntries(String key) {
            return Optional.of(RedisConformanceTest.entries(probe.keys("distlock:" + key, List.of(0))));
        }
    }

    @Test
    void close_leavesTheClientOpenAndUsable() {
        RedisClient client = CLIENTS.get(0);
        try (StatefulRedisConnection<String, String> held = client.connect()) {
            try (RemoteLocker locker = RedisLockers.using(client)
                    .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                    .build()) {
                RemoteLock lock = locker.tryLock("own-client").orElseThrow();
                assertThat(probe.keys("distlock:own-client", List.of(0))).hasSize(1);
                lock.close();
            }
            assertUsable(client, held);
            try (RemoteLocker again = RedisLockers.using(client).build()) {
                assertThat(again.tryLock("own-client-again")).isPresent();
            }
            assertUsable(client, held);
        }
    }

    @Test
    void redlock_overTheApplicationsClients_locksOnEveryMasterAndLeavesThemOpen() throws Exception {
        List<StatefulRedisConnection<String, String>> held = new ArrayList<>();
        for (RedisClient c : CLIENTS) {
            held.add(c.connect());
        }
        try (RemoteLocker locker = RedisLockers.redlock(CLIENTS).build()) {
            RemoteLock lock = locker.tryLock("own-redlock").orElseThrow();
            awaitOnEveryMaster("distlock:own-redlock");
            lock.close();
        }
        for (int i = 0; i < CLIENTS.size(); i++) {
            assertUsable(CLIENTS.get(i), held.get(i));
            held.get(i).close();
        }
    }

    @Test
    void redlock_oneClientManyUris_locksOnEveryMaster() throws Exception {
        RedisClient client = RedisClient.create();
        client.setOptions(SecuredRedis.clientOptions(PKI, "application"));
        try {
            List<RedisURI> masters =
                    REDIS.endpoints().stream().map(RedisLockersTest::uri).toList();
            try (RemoteLocker locker = RedisLockers.redlock(client, masters).build()) {
                assertThat(locker.toString()).doesNotContain(SecuredRedis.LOCKER_PASSWORD);
                RemoteLock lock = locker.tryLock("own-redlock-uris").orElseThrow();
                awaitOnEveryMaster("distlock:own-redlock-uris");
                lock.close();
            }
            try (StatefulRedisConnection<String, String> c = client.connect(masters.get(0))) {
                assertThat(c.sync().get("distlock:own-redlock-uris")).isNull();
            }
        } finally {
            client.shutdown();
        }
    }

    /**
     * A grant needs a majority of the masters: the last master's {@code SET} may still be on its way when {@code
     * tryLock} returns (seen once in a clean-clone CI run, two keys of three at the first look).
     */
    private static void awaitOnEveryMaster(String redisKey) throws InterruptedException {
        boolean everywhere = Deadlines.within(
                TestTimeouts.scaled(Duration.ofSeconds(5)),
                () -> probe.keys(redisKey).size() == CLIENTS.size());
        assertThat(everywhere)
                .as("%s on every master: %s", redisKey, probe.keys(redisKey))
                .isTrue();
    }

    @Test
    void connectionOptions_areRefused_theClientHasItsOwn() {
        for (String option : List.of("password", "user", "tls", "caFile", "database")) {
            assertThatThrownBy(() -> RedisLockers.using(CLIENTS.get(0))
                            .option(option, "secret-value")
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("'" + option + "' does not apply")
                    .hasMessageNotContaining("secret-value");
        }
    }

    @Test
    void using_clientWithoutDefaultUri_failsNamingIt() {
        RedisClient bare = RedisClient.create();
        try {
            assertThatThrownBy(() -> RedisLockers.using(bare)
                            .connectTimeout(TestTimeouts.scaled(Duration.ofSeconds(2)))
                            .build())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("RedisURI");
        } finally {
            bare.shutdown();
        }
    }

    @Test
    void redlock_evenNumberOfClients_isRejected() {
        assertThatThrownBy(() -> RedisLockers.redlock(CLIENTS.subList(0, 2)))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("odd number of masters");
        assertThatThrownBy(() -> RedisLockers.redlock(List.of(CLIENTS.get(0), CLIENTS.get(1), CLIENTS.get(0))))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("given twice");
    }
}
