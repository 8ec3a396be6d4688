package io.distlock.shedlock;

import io.distlock.testing.RedisServers;
import java.time.Duration;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's scenarios on one Redis server ({@code redis://}) and on three masters ({@code redlock://}). */
class RedisLockProviderTest {

    /** Redlock's clock-drift allowance, as both URIs use it: 1% of the lease plus 2 ms. */
    static Duration redlockDrift(Duration lease) {
        return lease.dividedBy(100).plusMillis(2);
    }

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(3).build();

    @Nested
    class Single extends LockProviderScenarios {
        @Override
        String lockerUri() {
            return "redis://" + REDIS.endpoints().get(0);
        }

        @Override
        Duration driftAllowance(Duration lockAtMostFor) {
            return redlockDrift(lockAtMostFor);
        }
    }

    @Nested
    class Redlock extends LockProviderScenarios {
        @Override
        String lockerUri() {
            return "redlock://" + String.join(",", REDIS.endpoints());
        }

        @Override
        Duration driftAllowance(Duration lockAtMostFor) {
            return redlockDrift(lockAtMostFor);
        }
    }
}
