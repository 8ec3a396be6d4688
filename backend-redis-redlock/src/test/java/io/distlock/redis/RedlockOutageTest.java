package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockBackend;
import io.distlock.testing.RedisServers;
import io.distlock.testing.ServerNode;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every master stopped: each call fails with the store's error within about {@code
 * connectTimeout}, deadline or not, and a wait through the outage backs off instead of retrying every few
 * milliseconds.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedlockOutageTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    private static RemoteLocker locker() {
        return RemoteLockers.builder()
                .uri("redlock://" + String.join(",", REDIS.endpoints()))
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .connectTimeout(CONNECT_TIMEOUT)
                .build();
    }

    private static void stopAll() {
        REDIS.nodes().forEach(ServerNode::stop);
    }

    @Test
    void tryLock_everyMasterStopped_failsWithTheStoresErrorWithinConnectTimeout() {
        try (RemoteLocker locker = locker()) {
            stopAll();
            long start = System.nanoTime();
            assertThatThrownBy(() -> locker.tryLock(RedisProbe.uniqueKey("down-try")))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Redis masters");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isLessThan(CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofSeconds(1))));
        }
    }

    @Test
    void lockWithMaxWait_everyMasterStopped_failsWithTheStoresErrorNotATimeout() {
        try (RemoteLocker locker = locker()) {
            stopAll();
            long start = System.nanoTime();
            assertThatThrownBy(() -> locker.lock(RedisProbe.uniqueKey("down-wait"), Duration.ofSeconds(2)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Redis masters");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isLessThan(CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofSeconds(1))));
        }
    }

    @Test
    void lockWithoutDeadline_everyMasterStopped_failsWithTheStoresErrorAfterConnectTimeout() throws Exception {
        try (RemoteLocker locker = locker()) {
            stopAll();
            long start = System.nanoTime();
            CompletableFuture<Throwable> outcome = CompletableFuture.supplyAsync(() -> {
                try {
                    locker.lock(RedisProbe.uniqueKey("down-forever")).release();
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            Duration bound = CONNECT_TIMEOUT.plus(TestTimeouts.scaled(Duration.ofSeconds(1)));
            assertThat(outcome.get(bound.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Redis masters");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(bound);
        }
    }

    /**
     * A wait through a 10 s outage (the outage limit set past it): the back-off starts at 5 ms and doubles to 1 s,
     * each delay at least half its bound, so the delays before the ninth attempt add up to at least 637 ms and each
     * later one is at least 500 ms: at most 1 + 8 + (10 000 - 637) / 500 = 27 attempts, one more at the deadline.
     * An attempt is one {@code SET} and one clean-up per master: 10 requests.
     */
    @Test
    void lock_tenSecondOutage_backsOffExponentially_countsFewRequests() {
        Duration outage = Duration.ofSeconds(10);
        try (LockBackend backend = Backends.open(
                REDIS.endpoints(),
                TestTimeouts.scaled(Duration.ofSeconds(5)),
                outage.multipliedBy(2),
                Ticker.system(),
                Map.of())) {
            stopAll();
            long before = backend.storeRequests().orElseThrow();
            assertThatThrownBy(() -> backend.acquire(
                            Backends.request(RedisProbe.uniqueKey("outage"), Duration.ofSeconds(5)),
                            Deadline.after(outage, Ticker.system())))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("Redis masters");
            long requests = backend.storeRequests().orElseThrow() - before;
            assertThat(requests).as("requests sent during a %s outage", outage).isLessThanOrEqualTo(10 * (27 + 1));
        }
    }
}
