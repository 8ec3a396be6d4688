package io.distlock.cassandra;

import static io.distlock.cassandra.CassandraCalls.join;
import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.spi.LockRequest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Seed section 4's legacy algorithm on one node, driven step by step: where it falls short of Theorem 4. */
class LegacyAlgorithmTest extends OneNodeFixture {

    /**
     * The legacy algorithm does not give Theorem 4 (of simultaneous tryLocks on a free lock, one wins): two TryLocks
     * (Listing 3) that both find the main row empty and both write their shadow cell before either reads the shadow
     * row both see two cells, both answer ConcurrentAttempt and withdraw, and the lock stays free with nobody holding
     * it. Driven step by step through the algorithm's own steps; a single full TryLock afterwards succeeds.
     */
    @Test
    void legacyTryLock_twoAtOnceOnAFreeKey_bothConcurrentAttempt_nobodyWins_theorem4Fails() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("legacy-t4");
        try (CassandraLockBackend backend = open("algorithm=legacy", lease)) {
            LegacyAlgorithm legacy = (LegacyAlgorithm) backend.algorithm();
            LockRequest ra = request(key, lease);
            LockRequest rb = request(key, lease);
            int ttl = Ttl.seconds(lease);
            // Lines 1-6: both find the main row empty.
            assertThat(join(legacy.mainRowEmptyAsync(key))).isTrue();
            assertThat(join(legacy.mainRowEmptyAsync(key))).isTrue();
            // Line 7: both write their shadow cell.
            join(legacy.writeShadowAsync(key, ra.ownerId(), ttl));
            join(legacy.writeShadowAsync(key, rb.ownerId(), ttl));
            // Lines 8-9: each sees two cells, so lines 14-15: ConcurrentAttempt, withdraw.
            assertThat(join(legacy.aloneInShadowAsync(key)))
                    .as("A alone in the shadow row")
                    .isFalse();
            assertThat(join(legacy.aloneInShadowAsync(key)))
                    .as("B alone in the shadow row")
                    .isFalse();
            join(legacy.withdrawAsync(key, ra.ownerId(), false));
            join(legacy.withdrawAsync(key, rb.ownerId(), false));
            // Both tryLocks failed and nobody holds the lock.
            assertThat(join(legacy.mainRowEmptyAsync(key))).isTrue();
            assertThat(cellsOf(key)).isEmpty();
            LegacyAlgorithm.Result alone = legacy.tryLock(request(key, lease));
            assertThat(alone.outcome).isEqualTo(LegacyAlgorithm.Outcome.SUCCESS);
            assertThat(backend.release(alone.lease.orElseThrow())).isTrue();
        }
    }
}
