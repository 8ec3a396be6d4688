package io.distlock.redis;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.testing.RedisServers;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit on five independent masters ({@code redlock://}). */
class RedlockConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    @Override
    public String lockerUri() {
        return "redlock://" + String.join(",", REDIS.endpoints());
    }
}
