package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.testing.RedisServers;
import io.distlock.testing.ServerNode;
import io.distlock.testing.StandardError;
import io.distlock.toolkit.HostList.Address;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A master whose connection stalls, drops and comes back (through the fixture's proxy): what Lettuce does with the
 * commands under way then must not leave a key behind or fail a caller before its own timeout.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedlockReconnectTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().build();

    /**
     * Lettuce, reconnecting on its own, re-sends the commands that were unanswered when a connection dropped. A
     * {@code SET NX PX} that timed out is a "maybe" whose clean-up, sent while the master is disconnected, is
     * rejected; re-sent after that, it would leave our value there for a whole ttl, a lock nobody holds.
     */
    @Test
    void attempt_connectionDropsWithTheSetUnanswered_theSetIsNotResentOnReconnect() throws Exception {
        ServerNode node = REDIS.node(0);
        String key = RedisProbe.uniqueKey("resend");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(20));
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend backend = Backends.open(
                        List.of(node.proxiedEndpoint()),
                        ttl,
                        Ticker.system(),
                        Map.of("instanceTimeout", "500ms", "retryCount", "0"))) {
            node.partition(); // the SET reaches the proxy, not the server
            long before = backend.storeRequests().orElseThrow();
            CompletableFuture<Object> attempt = CompletableFuture.supplyAsync(() -> {
                try {
                    return backend.tryAcquire(Backends.request(key, ttl));
                } catch (LockBackendException e) {
                    return e;
                }
            });
            Deadlines.await(
                    () -> backend.storeRequests().orElseThrow() > before,
                    Duration.ofSeconds(5),
                    () -> "the SET was not sent");
            node.disconnect(); // the connection drops with the SET unanswered; reconnections are refused
            assertThat(attempt.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(LockBackendException.class);
            node.heal();
            // Once a later attempt gets through, Lettuce has reconnected and sent whatever it had kept for then.
            String other = RedisProbe.uniqueKey("after-reconnect");
            Deadlines.await(
                    () -> acquired(backend, other, ttl),
                    Duration.ofSeconds(10),
                    () -> "the master was not reconnected");
            assertThat(probe.get(0, "distlock:" + key))
                    .as("the timed-out SET of the failed attempt, re-sent after the reconnection")
                    .isNull();
        }
    }

    /**
     * Several commands may wait for a master's first connection at once, each with its own timeout (an acquisition's
     * short per-instance timeout, a release's longer one): the first to give up must not fail the others.
     */
    @Test
    void send_whileConnecting_eachCallerWaitsItsOwnTimeout() throws Exception {
        ServerNode node = REDIS.node(0);
        String key = RedisProbe.uniqueKey("connecting");
        RedisProbe probe = new RedisProbe(REDIS.endpoints());
        probe.set(0, key, "ours", Duration.ofSeconds(60));
        node.partition(); // connections are accepted, the handshake is not answered
        RedlockSettings settings = new RedlockSettings(
                Duration.ofSeconds(30),
                Duration.ofMillis(100),
                0,
                Duration.ofMillis(10),
                Duration.ofMillis(500),
                Optional.empty(),
                0.01,
                "distlock:",
                TestTimeouts.scaled(Duration.ofSeconds(20)),
                Duration.ZERO);
        OwnResources resources = new OwnResources();
        String proxied = node.proxiedEndpoint();
        Address address = new Address(
                proxied.substring(0, proxied.lastIndexOf(':')),
                Integer.parseInt(proxied.substring(proxied.lastIndexOf(':') + 1)));
        ConnectionSettings connection = ConnectionSettings.plaintext();
        Connector connector = new OwnClient(
                connection.redisUri(address, settings.connectTimeout()),
                connection.clientOptions(settings.connectTimeout()),
                resources.lettuce());
        try (Master master = new Master(address.toString(), connector, settings, new LongAdder())) {
            CompletableFuture<Vote> quick = master.setIfAbsent(key, "someone", 30_000);
            CompletableFuture<Vote> patient = master.run(
                    TestTimeouts.scaled(Duration.ofSeconds(20)), LuaScript.RELEASE, key, "ours", "distlock:released");
            assertThat(quick.get(10, TimeUnit.SECONDS)).isEqualTo(Vote.FAILED);
            node.heal();
            assertThat(patient.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the release given 20s, after the acquisition's 100ms ran out while both waited to connect")
                    .isEqualTo(Vote.YES);
            assertThat(probe.exists(0, key)).isFalse();
        } finally {
            resources.close();
            probe.close();
        }
    }

    /**
     * A connection that completes as its master closes is closed once. Its master's callback closed it, and then the
     * client's shutdown closed it again (the client lets go of a connection only once its channel has closed), and
     * Lettuce logged "Connection is already closed" (WARN): four times in one CI run, as lockers closed while a master
     * reconnected. Here the connection is held back until the master's close has begun, then let through.
     */
    @Test
    void close_whileAConnectionCompletes_closesItOnce() throws Exception {
        String endpoint = REDIS.endpoints().get(0);
        Address address = new Address(
                endpoint.substring(0, endpoint.lastIndexOf(':')),
                Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1)));
        Duration timeout = TestTimeouts.scaled(Duration.ofSeconds(5));
        ConnectionSettings connection = ConnectionSettings.plaintext();
        try (OwnResources resources = new OwnResources()) {
            OwnClient client = new OwnClient(
                    connection.redisUri(address, timeout), connection.clientOptions(timeout), resources.lettuce());
            CompletableFuture<StatefulRedisConnection<String, String>> made = new CompletableFuture<>();
            CompletableFuture<Void> closing = new CompletableFuture<>();
            Connector heldBack = new Connector() {
                @Override
                public CompletableFuture<StatefulRedisConnection<String, String>> connect() {
                    client.connect().whenComplete((c, e) -> {
                        if (e != null) {
                            made.completeExceptionally(e);
                        } else {
                            made.complete(c);
                        }
                    });
                    return made.thenCombine(closing, (c, v) -> c);
                }

                @Override
                public CompletableFuture<StatefulRedisPubSubConnection<String, String>> connectPubSub() {
                    return client.connectPubSub();
                }

                @Override
                public void discard(StatefulConnection<String, String> c) {
                    client.discard(c);
                }

                @Override
                public void close() {
                    closing.complete(null); // the master is closed: the connection completes now, then the client shuts
                    client.close();
                }
            };
            RedlockSettings settings = RedlockSettings.read(new BackendConfig(
                    URI.create("redis://" + endpoint),
                    Map.of(),
                    Duration.ofSeconds(30),
                    timeout,
                    Duration.ZERO,
                    Ticker.system(),
                    Clock.systemUTC()));
            String logged = StandardError.during(() -> {
                Master master = new Master(address.toString(), heldBack, settings, new LongAdder());
                CompletableFuture<StatefulRedisConnection<String, String>> connecting = master.connect();
                StatefulRedisConnection<String, String> c = made.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                master.close();
                assertThat(connecting.get(timeout.toMillis(), TimeUnit.MILLISECONDS))
                        .isSameAs(c);
                Deadlines.await(() -> !c.isOpen(), timeout, () -> "the connection made as its master closed is open");
            });
            assertThat(logged).doesNotContain("already closed");
        }
    }

    private static boolean acquired(LockBackend backend, String key, Duration ttl) {
        try {
            return backend.tryAcquire(Backends.request(key, ttl))
                    .map(lease -> backend.release(lease))
                    .orElse(false);
        } catch (LockBackendException e) {
            return false;
        }
    }
}
