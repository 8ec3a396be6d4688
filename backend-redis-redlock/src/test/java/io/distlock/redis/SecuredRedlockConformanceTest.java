package io.distlock.redis;

import io.distlock.kit.TestTimeouts;
import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The secured kit on three masters over {@code redlock://...?tls=true}. Each master gets 200 ms to answer instead of
 * 100 ms (and the short lease is 2 s, ten of them): on a loaded 2-core machine the worker processes' TLS commands
 * missed 100 ms on two masters at once, which a {@code tryLock} reports as an unreachable store.
 */
class SecuredRedlockConformanceTest extends SecuredKit {

    static final TestPki PKI = SecuredRedis.pki("redlock-kit");

    @RegisterExtension
    static final RedisServers REDIS = SecuredRedis.servers(PKI, 3);

    private static final Duration INSTANCE_TIMEOUT = TestTimeouts.scaled(Duration.ofMillis(200));

    SecuredRedlockConformanceTest() {
        super(REDIS, PKI);
    }

    @Override
    public String lockerUri() {
        return "redlock://" + String.join(",", REDIS.endpoints()) + "?tls=true&instanceTimeout="
                + INSTANCE_TIMEOUT.toMillis() + "ms&" + options();
    }

    @Override
    public Duration shortLeaseTime() {
        return TestTimeouts.scaled(Duration.ofSeconds(2));
    }
}
