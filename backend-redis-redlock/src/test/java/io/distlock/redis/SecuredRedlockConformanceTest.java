package io.distlock.redis;

import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The secured kit on three masters over {@code redlock://...?tls=true}. */
class SecuredRedlockConformanceTest extends SecuredKit {

    static final TestPki PKI = SecuredRedis.pki("redlock-kit");

    @RegisterExtension
    static final RedisServers REDIS = SecuredRedis.servers(PKI, 3);

    SecuredRedlockConformanceTest() {
        super(REDIS, PKI);
    }

    @Override
    public String lockerUri() {
        return "redlock://" + String.join(",", REDIS.endpoints()) + "?tls=true&" + options();
    }
}
