package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.testing.StandardError;
import io.distlock.testing.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Lockers on the application's own session, on one node. */
class CassandraLockersTest extends OneNodeFixture {

    @Test
    void lockersUsing_sessionWhoseNodeHasAnIpv6Address_buildsAndLocks() {
        // The application's session reaches the node at [::1], through a proxy there: its node's end point is IPv6.
        try (TcpProxy proxy = TcpProxy.start(
                        "ipv6",
                        new InetSocketAddress("::1", 0),
                        CASSANDRA.contactPoints().get(0));
                CqlSession v6 = CqlSession.builder()
                        .addContactPoint(proxy.listenAddress())
                        .withLocalDatacenter(CASSANDRA.localDatacenter())
                        .build()) {
            assertThat(v6.getMetadata().getNodes().values())
                    .extracting(node -> ((InetSocketAddress) node.getEndPoint().resolve()).getAddress())
                    .allMatch(address -> address instanceof java.net.Inet6Address);
            String key = key("ipv6");
            try (RemoteLocker locker =
                    CassandraLockers.using(v6, CASSANDRA.keyspace()).build()) {
                RemoteLock lock = locker.tryLock(key).orElseThrow();
                assertThat(cellsOf(key)).isNotEmpty();
                lock.release();
            }
            assertThat(cellsOf(key)).isEmpty();
            assertThat(v6.isClosed()).isFalse();
        }
    }

    /**
     * Closing a locker that opened its own session logs nothing, also on a busy machine. The driver's close hands its
     * work to its admin event loop and then adds a listener to that hand-off; with no quiet period the loop could
     * finish the close and terminate before the listener was added, and Netty logged an ERROR with a stack trace
     * ("Failed to submit a listener notification task. Event loop shut down?") on the closing thread, 8 times in one
     * run of this module's tests. Every other locker here updates GlobalTime every millisecond, so that its close
     * meets a tick in flight (a tick that read the cell as its session closed logged the same ERROR once in a run of the
     * module; a close now waits for a tick that fired already, a race too rare to catch here: 200 such closes on the
     * code before logged nothing).
     */
    @Test
    void close_onABusyMachine_logsNoErrorFromTheDriversEventLoops() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> spinners = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread spinner = new Thread(() -> {
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            });
            spinner.setDaemon(true);
            spinner.start();
            spinners.add(spinner);
        }
        String logged;
        try {
            logged = StandardError.during(() -> {
                for (int i = 0; i < 30; i++) {
                    // Every other locker updates GlobalTime every millisecond, so that its close meets a tick.
                    try (CassandraLockBackend backend =
                            open(i % 2 == 0 ? "" : "timePeriod=1ms", Duration.ofSeconds(5))) {
                        assertThat(backend.capabilities().fair()).isTrue();
                    }
                }
            });
        } finally {
            stop.set(true);
            for (Thread spinner : spinners) {
                spinner.join();
            }
        }
        assertThat(logged).doesNotContain("Event loop shut down").doesNotContain(" ERROR ");
    }
}
