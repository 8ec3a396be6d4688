package io.distlock.redis;

import io.distlock.Ticker;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Opens the backend directly through the SPI, with a chosen ticker and options: for tests below the locker. */
final class Backends {

    private Backends() {}

    static LockBackend open(List<String> endpoints, Duration ttl, Ticker ticker, Map<String, String> options) {
        return open(endpoints, ttl, Duration.ofSeconds(5), ticker, options);
    }

    static LockBackend open(
            List<String> endpoints, Duration ttl, Duration connectTimeout, Ticker ticker, Map<String, String> options) {
        return open(endpoints, ttl, connectTimeout, Duration.ZERO, ticker, options);
    }

    /** A backend on {@code endpoints} whose locker has a lock-delay of {@code lockDelay}. */
    static LockBackend open(List<String> endpoints, Duration ttl, Duration lockDelay) {
        return open(endpoints, ttl, Duration.ofSeconds(5), lockDelay, Ticker.system(), Map.of());
    }

    private static LockBackend open(
            List<String> endpoints,
            Duration ttl,
            Duration connectTimeout,
            Duration lockDelay,
            Ticker ticker,
            Map<String, String> options) {
        String scheme = endpoints.size() == 1 ? "redis://" : "redlock://";
        BackendConfig config = new BackendConfig(
                URI.create(scheme + String.join(",", endpoints)),
                options,
                ttl,
                connectTimeout,
                lockDelay,
                ticker,
                Clock.systemUTC());
        return new RedisLockBackendProvider().open(config);
    }

    static LockBackend open(List<String> endpoints, Duration ttl) {
        return open(endpoints, ttl, Ticker.system(), Map.of());
    }

    static LockRequest request(String key, Duration ttl) {
        return new LockRequest(key, UUID.randomUUID() + ".test", ttl, reason -> {});
    }
}
