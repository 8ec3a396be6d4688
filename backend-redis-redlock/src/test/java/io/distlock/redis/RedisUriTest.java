package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What opening says about bad URIs and options: each a clear error, before any connection is tried. */
class RedisUriTest {

    private static void rejected(String uri, String... phrases) {
        assertThatThrownBy(() -> RemoteLockers.open(uri))
                .isInstanceOf(LockConfigurationException.class)
                .satisfies(e -> {
                    for (String p : phrases) {
                        assertThat(e.getMessage()).contains(p);
                    }
                });
    }

    @Test
    void open_evenNumberOfMasters_explainsWhyOdd() {
        rejected("redlock://127.0.0.1:7001,127.0.0.1:7002", "odd number of masters", "names 2");
        rejected(
                "redlock://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003,127.0.0.1:7004",
                "a majority of 4 is 3",
                "use 3 or 5 masters");
    }

    @Test
    void open_noHost_isRejected() {
        rejected("redlock://");
        rejected("redlock://127.0.0.1:7001,,127.0.0.1:7003", "empty host");
    }

    @Test
    void open_sameMasterTwice_isRejected() {
        rejected("redlock://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7001", "same master twice");
        rejected("redlock://localhost:7001,127.0.0.1:7001,127.0.0.1:7003", "same master twice");
    }

    @Test
    void sentinelUri_namesTheSentinels_portsDefaultingTo26379_andTheMaster() {
        RedisLocation location = RedisLocation.parse(URI.create("redis-sentinel://s1,s2:26380,s3/orders-master"));
        assertThat(location.masters().stream().map(Object::toString))
                .containsExactly("s1:26379", "s2:26380", "s3:26379");
        assertThat(location.sentinelMaster()).contains("orders-master");
        assertThat(location.majority()).isEqualTo(1);
        assertThat(location).hasToString("redis-sentinel://s1:26379,s2:26380,s3:26379/orders-master");
        rejected("redis-sentinel://s1:26379,s1:26379/m", "names the host s1:26379 twice");
        rejected("redis-sentinel:///m", "names no host");
        rejected("redis-sentinel://s1/", "names no master", "redis-sentinel://s1:26379,s2:26379,s3:26379/mymaster");
    }

    @Test
    void open_ttlTooShortForInstanceTimeout_isRejected() {
        rejected(
                "redis://127.0.0.1:7001?ttl=400ms&instanceTimeout=50ms",
                "too short for the per-instance timeout",
                "instanceTimeout");
        rejected(
                "redis://127.0.0.1:7001?ttl=2s&instanceTimeout=300ms",
                "ttl 2s is too short for the per-instance timeout 300ms",
                "raise ttl to 3s");
    }

    @Test
    void open_malformedParts_areNamed() {
        rejected("redis://127.0.0.1:99999", "must be 1..65535");
        rejected("redis://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003", "redis:// takes one instance", "redlock://");
        rejected("redis://127.0.0.1:7001/2", "option 'database'");
        rejected("redis://user:secret@127.0.0.1:7001", "options 'user' and 'password'");
        assertThatThrownBy(() -> RemoteLockers.open("redis://user:secret@127.0.0.1:7001"))
                .hasMessageNotContaining("secret");
        rejected("redis://127.0.0.1:7001?clockDriftFactor=0.7", "clockDriftFactor", "[0, 0.5)");
        rejected("redis://127.0.0.1:7001?retryCount=-1", "retryCount");
        rejected("redis://127.0.0.1:7001?courtesy=soon", "courtesy", "must be a duration");
        rejected("redis://127.0.0.1:7001?courtesy=-2ms", "courtesy", "must be a duration");
        rejected("redis://127.0.0.1:7001?ttl=1s&courtesy=1s", "'courtesy' must be shorter than the ttl 1s, got 1s");
        rejected("redis://127.0.0.1:7001?instanceTimout=20ms", "Unknown option", "instanceTimout", "instanceTimeout");
    }

    @Test
    void open_typedOptions_areTheQueryParameters() {
        assertThat(RedisLockOptions.create()
                        .instanceTimeout(Duration.ofMillis(20))
                        .retryCount(5)
                        .clockDriftFactor(0.02)
                        .courtesy(Duration.ZERO)
                        .asMap())
                .containsEntry("courtesy", "0")
                .containsEntry("instanceTimeout", "20ms")
                .containsEntry("retryCount", "5")
                .containsEntry("clockDriftFactor", "0.02");
        assertThatThrownBy(() -> RedisLockOptions.create()
                        .instanceTimeout(Duration.ofSeconds(1))
                        .applyTo(RemoteLockers.builder()
                                .uri("redis://127.0.0.1:7001")
                                .leaseTime(Duration.ofSeconds(5)))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("too short");
    }

    @Test
    void open_nothingListening_failsWithinConnectTimeout() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        long start = System.nanoTime();
        assertThatThrownBy(() -> RemoteLockers.open("redis://127.0.0.1:" + port + "?connectTimeout=1s"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:" + port)
                .hasMessageContaining("within 1s (option connectTimeout)")
                .hasMessageContaining("0 of 1 connected");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
}
