package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryEvent;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Seed 002's persistence caveat, on five masters that keep nothing on disk: a master that restarts empty while a lock
 * is held gives the lock a second holder; kept down for longer than the ttl first ("delayed restart"), it does not.
 *
 * <p>Each hold enters the history from its grant to the end of its validity (what the holder may believe), so an
 * overlap in the history is two owners that could both act at once.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedlockPersistenceTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    private static final long PID = ProcessHandle.current().pid();

    /**
     * The holder A has the key on masters 0, 1, 2 (3 and 4 were down when it locked, then came back empty). Master 0
     * crashes and restarts at once without its data: B finds the key free on 0, 3 and 4, a majority, while A's
     * validity still runs. The history checker reports the overlap. This is the algorithm's documented limit, not a
     * bug to hide: run masters with AOF and {@code appendfsync always}, or restart them only after the largest ttl.
     */
    @Test
    void masterRestartedWithoutPersistence_whileLockHeld_historyShowsTwoHolders() throws Exception {
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(10));
        String key = RedisProbe.uniqueKey("restart-now");
        List<HistoryEvent> history = new ArrayList<>();
        REDIS.node(3).kill9();
        REDIS.node(4).kill9();
        try (LockBackend a = Backends.open(REDIS.endpoints(), ttl)) {
            Lease first = hold(a, key, ttl, history);
            REDIS.node(3).restart();
            REDIS.node(4).restart();
            REDIS.node(0).kill9();
            REDIS.node(0).restart(); // at once, empty
            try (LockBackend b = Backends.open(REDIS.endpoints(), ttl)) {
                Lease second = hold(b, key, ttl, history);
                assertThat(Ticker.system().read()).isLessThan(first.validUntilNanos());
                releaseQuietly(b, second);
            }
            releaseQuietly(a, first);
        }
        List<String> violations = HistoryChecker.violations(history);
        assertThat(violations)
                .as("the history checker on %s", history)
                .isNotEmpty()
                .anyMatch(v -> v.contains(key));
    }

    /**
     * The same crash, but master 0 rejoins only after the ttl has passed (seed 002's delayed restart): by then A's
     * keys on the other masters have expired and its validity is over, so B's hold begins after A's ends.
     */
    @Test
    void masterRestartedAfterTtl_whileLockHeld_historyStaysConsistent() throws Exception {
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(2));
        String key = RedisProbe.uniqueKey("restart-late");
        List<HistoryEvent> history = new ArrayList<>();
        REDIS.node(3).kill9();
        REDIS.node(4).kill9();
        try (LockBackend a = Backends.open(REDIS.endpoints(), ttl)) {
            Lease first = hold(a, key, ttl, history);
            REDIS.node(3).restart();
            REDIS.node(4).restart();
            REDIS.node(0).kill9();
            long restartAt = System.nanoTime() + ttl.toNanos() + TimeUnit.MILLISECONDS.toNanos(100);
            try (LockBackend b = Backends.open(REDIS.endpoints(), ttl)) {
                // While master 0 is down, B cannot get a majority: A's keys still hold 1 and 2.
                assertThat(b.tryAcquire(Backends.request(key, ttl))).isEmpty();
                TimeUnit.NANOSECONDS.sleep(Math.max(0, restartAt - System.nanoTime())); // the rule: wait out the ttl
                REDIS.node(0).restart();
                Lease second = hold(b, key, ttl, history);
                releaseQuietly(b, second);
            }
            releaseQuietly(a, first);
        }
        assertThat(HistoryChecker.violations(history))
                .as("the history checker on %s", history)
                .isEmpty();
    }

    /** Acquires, and records the hold from the grant to the end of its validity (released or not). */
    private static Lease hold(LockBackend backend, String key, Duration ttl, List<HistoryEvent> history)
            throws InterruptedException {
        LockRequest request = Backends.request(key, ttl);
        Optional<Lease> lease =
                backend.acquire(request, Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(10)), Ticker.system()));
        long granted = System.nanoTime();
        assertThat(lease).as("acquiring %s", key).isPresent();
        history.add(event(granted, HistoryEvent.Type.ACQUIRED, key, request.ownerId()));
        history.add(event(lease.get().validUntilNanos(), HistoryEvent.Type.RELEASING, key, request.ownerId()));
        return lease.get();
    }

    /** Releases at the end of a test whose masters were just restarted; the answer is not what is tested. */
    private static void releaseQuietly(LockBackend backend, Lease lease) {
        try {
            backend.release(lease);
        } catch (LockBackendException e) {
            // a master still reconnecting; the keys run out with the ttl
        }
    }

    private static HistoryEvent event(long nanos, HistoryEvent.Type type, String key, String owner) {
        return new HistoryEvent(nanos, type, key, OptionalLong.empty(), owner, PID);
    }
}
