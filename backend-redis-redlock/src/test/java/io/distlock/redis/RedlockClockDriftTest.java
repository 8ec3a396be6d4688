package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The validity of a lease against the client's clock rate (seed 002: "clocks run at about the same rate; the drift is
 * small against the ttl"). The masters expire the keys on their own clocks; the holder's ticker, injected here, runs
 * faster or slower than theirs. Safe means: by the time the keys are gone from a majority (another owner could take
 * the lock), the holder's own ticker says its validity is over.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedlockClockDriftTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    private static final Duration TTL = Duration.ofMillis(1000);
    private static final double DRIFT_FACTOR = 0.01;
    private static RedisProbe probe;

    @BeforeAll
    static void probe() {
        probe = new RedisProbe(REDIS.endpoints());
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    /** A ticker that runs at {@code rate} times real time. */
    private static Ticker skewed(double rate) {
        long origin = System.nanoTime();
        return () -> origin + (long) ((System.nanoTime() - origin) * rate);
    }

    /** Rates within the drift factor (0.01 of the ttl, plus 2 ms), fast and slow: safe. */
    @ParameterizedTest(name = "rate {0}")
    @ValueSource(doubles = {1.01, 1.005, 0.995})
    void validity_clientClockWithinDriftBound_endsBeforeTheKeysExpire(double rate) throws Exception {
        long overstay = overstayNanos(rate);
        assertThat(overstay)
                .as("how long the holder still believed it held the lock after its keys expired (rate %s)", rate)
                .isLessThanOrEqualTo(0);
    }

    /**
     * A client clock 10% slow, far beyond the drift factor: the keys expire while the holder still believes it holds
     * the lock. Seed 002's assumption, shown to matter; no algorithm without fencing can detect it.
     */
    @Test
    void validity_clientClockSlowerThanDriftBound_outlivesTheKeys() throws Exception {
        assertThat(overstayNanos(0.9)).isPositive();
    }

    /**
     * Acquires with a ticker at {@code rate}, waits (real time) until the key is gone from a majority of the masters,
     * and returns how far the holder's validity then still reached into the future by its own ticker.
     */
    private long overstayNanos(double rate) throws Exception {
        Ticker ticker = skewed(rate);
        String key = RedisProbe.uniqueKey("drift");
        String redisKey = "distlock:" + key;
        try (LockBackend backend = Backends.open(
                REDIS.endpoints(),
                TTL,
                ticker,
                Map.of(RedisLockBackendProvider.CLOCK_DRIFT_FACTOR, Double.toString(DRIFT_FACTOR)))) {
            Lease lease = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            Deadlines.await(
                    () -> goneFromMajority(redisKey),
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
                    () -> "the key " + redisKey + " did not expire");
            return lease.validUntilNanos() - ticker.read();
        }
    }

    private static boolean goneFromMajority(String redisKey) {
        int gone = 0;
        for (int i : List.of(0, 1, 2, 3, 4)) {
            if (!probe.exists(i, redisKey)) {
                gone++;
            }
        }
        return gone >= 3;
    }
}
