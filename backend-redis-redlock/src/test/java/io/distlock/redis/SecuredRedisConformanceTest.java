package io.distlock.redis;

import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The secured kit on one Redis instance over {@code rediss://}. */
class SecuredRedisConformanceTest extends SecuredKit {

    static final TestPki PKI = SecuredRedis.pki("redis-kit");

    @RegisterExtension
    static final RedisServers REDIS = SecuredRedis.servers(PKI, 1);

    SecuredRedisConformanceTest() {
        super(REDIS, PKI);
    }

    @Override
    public String lockerUri() {
        return "rediss://" + REDIS.endpoints().get(0) + "?" + options();
    }
}
