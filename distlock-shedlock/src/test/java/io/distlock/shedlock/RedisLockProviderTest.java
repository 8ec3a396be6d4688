package io.distlock.shedlock;

import io.distlock.testing.RedisServers;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.extension.RegisterExtension;

/** ShedLock's scenarios on one Redis server ({@code redis://}) and on three masters ({@code redlock://}). */
class RedisLockProviderTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(3).build();

    @Nested
    class Single extends LockProviderScenarios {
        @Override
        String lockerUri() {
            return "redis://" + REDIS.endpoints().get(0);
        }
    }

    @Nested
    class Redlock extends LockProviderScenarios {
        @Override
        String lockerUri() {
            return "redlock://" + String.join(",", REDIS.endpoints());
        }
    }
}
