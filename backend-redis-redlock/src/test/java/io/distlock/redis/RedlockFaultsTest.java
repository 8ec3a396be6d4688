package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Redlock on five masters while one freezes or some hold foreign keys: liveness, nothing left behind, and what an
 * operator's look-up shows of them. Masters
 * killed (a minority, a majority) and a lock's key deleted out of band are the kit's store-fault matrix, run by {@link
 * RedlockConformanceTest}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedlockFaultsTest {

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

    private static RemoteLocker locker() {
        return RemoteLockers.builder()
                .uri(uri())
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .connectTimeout(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .build();
    }

    private static String uri() {
        return "redlock://" + String.join(",", REDIS.endpoints());
    }

    @Test
    void lock_pausedMaster_perInstanceTimeoutKeepsAcquisitionShort() throws Exception {
        String key = RedisProbe.uniqueKey("paused");
        try (RemoteLocker locker = locker()) {
            REDIS.node(1).pause();
            // Far below the connect timeout (5s); Lettuce's own command timeout is off on our clients: the paused
            // master costs at most its per-instance timeout (100ms) per call, bounded by the backend alone.
            Duration bound = TestTimeouts.scaled(Duration.ofSeconds(2));
            for (int i = 0; i < 5; i++) {
                long start = System.nanoTime();
                try (RemoteLock held = locker.lock(key, TestTimeouts.scaled(Duration.ofSeconds(10)))) {
                    assertThat(held.isHeld()).isTrue();
                }
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(bound);
            }
        } finally {
            REDIS.node(1).resume();
        }
    }

    @Test
    void tryLock_lockHeldOnAMajorityByAnother_leavesNoKeyOfTheFailedAttempt() {
        String key = RedisProbe.uniqueKey("foreign");
        String redisKey = "distlock:" + key;
        for (int master : List.of(0, 1, 2)) {
            probe.set(master, redisKey, "foreign-holder", Duration.ofSeconds(30));
        }
        try (RemoteLocker locker = locker()) {
            assertThat(locker.tryLock(key)).isEmpty();
        }
        // Our attempt set the key on masters 3 and 4, then deleted it there: only the foreign keys remain.
        assertThat(probe.keys(redisKey))
                .containsOnlyKeys(
                        REDIS.endpoints().get(0),
                        REDIS.endpoints().get(1),
                        REDIS.endpoints().get(2));
    }

    /**
     * An operator's look-up counts a holder on a majority only: another tool's value (a {@code SET} under the prefix) on
     * three masters is shown as it is stored, as owner id and label, with its ttl; one on two masters is not held, and
     * the listing shows the first key and not the second.
     */
    @Test
    void inspect_foreignValueOnAMajority_isShownRaw_onAMinority_isNotHeld() {
        String key = RedisProbe.uniqueKey("foreign-shown");
        String minority = key + "-minority";
        for (int master : List.of(0, 1, 2)) {
            probe.set(master, "distlock:" + key, "set by redis-cli", Duration.ofSeconds(30));
        }
        for (int master : List.of(3, 4)) {
            probe.set(master, "distlock:" + minority, "set by redis-cli", Duration.ofSeconds(30));
        }
        try (RemoteLocker locker = locker()) {
            LockState state = locker.inspect(key);
            assertThat(state.holders()).hasSize(1);
            LockHolder holder = state.holders().get(0);
            assertThat(holder.ownerLabel()).isEqualTo("set by redis-cli");
            assertThat(holder.ownerId()).isEqualTo("set by redis-cli");
            assertThat(holder.leaseEnds()).isPresent();
            assertThat(holder.fencingToken()).isEmpty();
            assertThat(locker.inspect(minority).held())
                    .as("a value on two of five masters")
                    .isFalse();
            assertThat(locker.listHeld().stream().map(LockState::key).filter(k -> k.startsWith(key)))
                    .containsExactly(key);
        } finally {
            for (int m = 0; m < 5; m++) {
                probe.delete(m, "distlock:" + key);
                probe.delete(m, "distlock:" + minority);
            }
        }
    }

    /**
     * Theorem 4 is probabilistic on Redlock: with the masters split 2/2 between two other contenders' values (as a
     * 2/2/1 race leaves them until the contenders clean up), a {@code tryLock} wins the fifth master only, and answers
     * empty after its retries although nobody holds a majority.
     */
    @Test
    void tryLock_mastersSplitBetweenTwoOtherContenders_answersEmpty_thoughNobodyHoldsAMajority() {
        String key = RedisProbe.uniqueKey("split");
        String redisKey = "distlock:" + key;
        probe.set(0, redisKey, "contender-a", Duration.ofSeconds(30));
        probe.set(1, redisKey, "contender-a", Duration.ofSeconds(30));
        probe.set(2, redisKey, "contender-b", Duration.ofSeconds(30));
        probe.set(3, redisKey, "contender-b", Duration.ofSeconds(30));
        try (RemoteLocker locker = locker()) {
            assertThat(locker.tryLock(key)).isEmpty();
        }
        assertThat(probe.get(4, redisKey))
                .as("our value on the fifth master, cleaned up")
                .isNull();
        for (int m : List.of(0, 1, 2, 3)) {
            probe.delete(m, redisKey);
        }
    }

    @Test
    void release_afterHoldAndContention_leavesNoKeyOnAnyMaster() throws Exception {
        String key = RedisProbe.uniqueKey("clean");
        try (RemoteLocker a = locker();
                RemoteLocker b = locker()) {
            RemoteLock held = a.lock(key, TestTimeouts.scaled(Duration.ofSeconds(10)));
            // granted once a majority said yes: the other masters' writes may still be on their way
            Deadlines.await(
                    () -> probe.keys("distlock:" + key).size() == 5,
                    Duration.ofSeconds(2),
                    () -> "the key on all five masters: " + probe.keys("distlock:" + key));
            assertThat(b.tryLock(key)).isEmpty();
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
            Optional<RemoteLock> next = b.tryLock(key);
            assertThat(next).isPresent();
            next.get().release();
        }
        Deadlines.await(
                () -> probe.keys("distlock:" + key).isEmpty(),
                Duration.ofSeconds(2),
                () -> "keys left behind: " + probe.keys("distlock:" + key));
    }
}
