package io.distlock.redis;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.StoreFaults;
import io.distlock.testing.RedisServers;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit on one Redis instance ({@code redis://}). */
class RedisConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().build();

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
        return "redis://" + REDIS.endpoints().get(0);
    }

    /**
     * Stops and starts the instance, deletes the key there (the holder is told at its next renewal), cuts a locker
     * off through the proxy; no node faults (one instance has no minority to lose).
     */
    @Override
    public Optional<StoreFaults> storeFaults() {
        return Optional.of(new RedisStoreFaults(REDIS, probe, leaseTime()));
    }

    /**
     * Read-write locks and semaphores are the same scripts and the same backend on one master as on five (where a
     * permit's quorum is the master itself): their contracts run once for Redis, in {@link RedlockConformanceTest}.
     */
    @Override
    public Optional<String> kindsTestedElsewhere() {
        return Optional.of("read-write locks and semaphores run once per store: on Redis in RedlockConformanceTest"
                + " (the same scripts over five masters)");
    }

    /**
     * Inspection, breaking and release requests read, delete and write by the same script ({@code holders.lua}) and
     * count holders by the same quorum on one master as on five, and the lock-delay is the same {@code PX} on every
     * master: their contracts run once for Redis, in {@link RedlockConformanceTest}.
     */
    @Override
    public Optional<String> operationsTestedElsewhere() {
        return Optional.of("inspection, breaking, release requests and the lock-delay run once per store: on Redis in"
                + " RedlockConformanceTest (the same scripts and quorum over five masters)");
    }

    /** Port 1 on loopback: nothing listens there. */
    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("redis://127.0.0.1:1");
    }

    /** The key's value on the instance, as {@code endpoint: key=value}. */
    @Override
    public Optional<List<String>> storeEntries(String key) {
        return Optional.of(entries(REDIS, probe, key));
    }

    /**
     * The key on every master that runs, as {@code endpoint: key=value}. A killed master is left out: it comes back
     * empty (the fixture's servers keep nothing on disk).
     */
    static List<String> entries(RedisServers redis, RedisProbe probe, String key) {
        List<Integer> running = IntStream.range(0, redis.nodes().size())
                .filter(m -> redis.node(m).isRunning())
                .boxed()
                .toList();
        return entries(probe.keys("distlock:" + key, running));
    }

    static List<String> entries(Map<String, List<String>> byMaster) {
        return byMaster.entrySet().stream()
                .flatMap(e -> e.getValue().stream().map(v -> e.getKey() + ": " + v))
                .toList();
    }
}
