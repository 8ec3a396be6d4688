package io.distlock.redis;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.testing.RedisServers;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The conformance kit on one Redis instance ({@code redis://}). */
class RedisConformanceTest extends LockerConformanceTests {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().build();

    @Override
    public String lockerUri() {
        return "redis://" + REDIS.endpoints().get(0);
    }
}
