package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A store that dies under an open locker: {@code tryLock} and a bounded {@code lock} give up within {@code
 * connectTimeout}, one bound as on the other stores (not once for the attempt and once more for its clean-up).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class DeadStoreTest {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Well below a second {@code connectTimeout}: the time to notice and to throw, on a slow machine scaled. */
    private static final Duration MARGIN = TestTimeouts.scaled(Duration.ofMillis(500));

    private TestingServer server;
    private RemoteLocker locker;

    @BeforeEach
    void openThenStopTheStore() throws Exception {
        server = ZkTestServers.server();
        locker = RemoteLockers.builder()
                .uri("zk://" + server.getConnectString() + "/dead")
                .connectTimeout(CONNECT_TIMEOUT)
                .option(ZooKeeperLockOptions.SESSION_TIMEOUT, "20s")
                .build();
        locker.tryLock("warm-up").orElseThrow().release();
        server.stop();
    }

    @AfterEach
    void close() throws Exception {
        if (locker != null) {
            locker.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void tryLock_onADeadStore_failsWithinConnectTimeout() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> locker.tryLock("k")).isInstanceOf(LockBackendException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CONNECT_TIMEOUT.plus(MARGIN));
    }

    @Test
    void lock_withAWaitOfConnectTimeout_onADeadStore_failsWithinIt() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> locker.lock("k", CONNECT_TIMEOUT)).isInstanceOf(LockBackendException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(CONNECT_TIMEOUT.plus(MARGIN));
    }
}
