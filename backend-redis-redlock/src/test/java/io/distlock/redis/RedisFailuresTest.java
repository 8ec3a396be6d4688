package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisConnectionException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The words a plaintext client gets from a TLS port depend on timing; {@link RedisSecurityTest} meets whichever one the
 * run gives. These cases pin each known one, shaped as Lettuce throws it, to the advice that names rediss://.
 */
class RedisFailuresTest {

    @Test
    void describe_handshakeHandlerNotRegisteredWhileConnecting_namesTls() {
        Throwable e = new CompletionException(new RedisConnectionException(
                "Unable to connect to 127.0.0.1:6380",
                new IllegalStateException("RedisHandshakeHandler not registered")));

        assertThat(RedisFailures.describe(e, "lock:", true)).hasValueSatisfying(m -> assertThat(m)
                .contains("closed the connection during the handshake")
                .contains("rediss://"));
    }

    /**
     * A sentinel that asks for a password, met without one: Lettuce reports its {@code NOAUTH} or, by timing (seen once
     * in CI, in {@code RedisSentinelTest}), the handshake cut short; either way the advice names the sentinels' options.
     */
    @Test
    void describe_handshakeCutShortOnTheWayToASentinel_namesTheSentinelsPassword() {
        Throwable e = new CompletionException(new RedisConnectionException(
                "Cannot connect to a Redis Sentinel: [redis://127.0.0.1:26379]",
                new IllegalStateException("RedisHandshakeHandler not registered")));

        assertThat(RedisFailures.describe(e, "lock:", true)).hasValueSatisfying(m -> assertThat(m)
                .contains("closed the connection during the handshake")
                .contains("rediss://")
                .contains("sentinelPassword"));
    }

    @Test
    void describe_connectionClosedPrematurelyWhileConnecting_namesTls() {
        Throwable e = new RedisConnectionException(
                "Unable to connect to 127.0.0.1:6380", new RedisConnectionException("Connection closed prematurely"));

        assertThat(RedisFailures.describe(e, "lock:", true))
                .hasValueSatisfying(m -> assertThat(m).contains("rediss://"));
    }

    @Test
    void describe_connectionClosedOnAnOpenConnection_isNoRefusal() {
        Throwable e = new RedisConnectionException("Connection closed prematurely");

        assertThat(RedisFailures.describe(e, "lock:", false)).isEmpty();
    }
}
