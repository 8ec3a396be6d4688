package io.distlock.redis;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.StoreFaults;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit on five independent masters ({@code redlock://}). Each master gets 200 ms to answer instead of
 * 100 ms, scaled with the other test timeouts (and the short lease is 2 s, ten of them): on 2 cores at load 30-40, all
 * five masters' answers to simultaneous {@code tryLock}s missed 100 ms (the JVM's threads waited that long for a
 * core), and {@code tryLock} rightly reports such a store as unreachable.
 */
class RedlockConformanceTest extends LockerConformanceTests {

    private static final Duration INSTANCE_TIMEOUT = TestTimeouts.scaled(Duration.ofMillis(200));

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    private static RedisProbe probe;

    @BeforeAll
    static void probe() {
        probe = new RedisProbe(REDIS.endpoints());
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    @Override
    public String lockerUri() {
        return "redlock://" + String.join(",", REDIS.endpoints()) + "?instanceTimeout=" + INSTANCE_TIMEOUT.toMillis()
                + "ms";
    }

    @Override
    public Duration shortLeaseTime() {
        return TestTimeouts.scaled(Duration.ofSeconds(2));
    }

    /**
     * Stops and starts the five masters, deletes the key there (the holder is told at its next renewal), kills or
     * freezes single masters (quorum 3), cuts a locker off through the masters' proxies.
     */
    @Override
    public Optional<StoreFaults> storeFaults() {
        return Optional.of(new RedisStoreFaults(REDIS, probe, leaseTime()));
    }

    /** Five closed ports on loopback. */
    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redlock://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3,127.0.0.1:4,127.0.0.1:5");
    }

    /**
     * The key on every running master, as {@code endpoint: key=value}: a holder shows a line per master, a free key
     * none.
     */
    @Override
    public Optional<List<String>> storeEntries(String key) {
        return Optional.of(RedisConformanceTest.entries(REDIS, probe, key));
    }
}
