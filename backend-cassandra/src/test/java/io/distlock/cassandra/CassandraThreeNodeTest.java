package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.LockException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.CassandraCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A three-node cluster with RF = 3, forked once for the class: the conformance kit for the queue algorithm with
 * fencing (every path of the queue without fencing is a part of it), and the node failures QUORUM must ride out.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class CassandraThreeNodeTest {

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().withNodes(3).dedicated().build();

    @BeforeAll
    static void schema() {
        CassandraKitHooks.createSchema(CASSANDRA);
    }

    static String uri(String options) {
        return CassandraKitHooks.uri(CASSANDRA, options);
    }

    @Nested
    class FencedQueueKit extends LockerConformanceTests implements CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return "fencing=true";
        }

        /**
         * Each acquisition at QUORUM on three nodes costs several round trips plus the fencing counter's Paxos
         * rounds; 4 per thread still makes every thread contend on every acquisition.
         */
        @Override
        public int acquisitionsPerThread() {
            return 4;
        }

        /** Not on three nodes: see the reason. The restart under waiters runs on one node, in CassandraStoreFaultTest. */
        @Override
        @Test
        @Disabled("restarting three Cassandra nodes takes 40-50 s on 2 cores (minutes under load): the run cannot"
                + " recover within its limit; the one-node class runs the restart under waiters")
        public void storeRestartedWhileWaitersWait_eachGetsTheLockOrAClearExceptionByItsDeadline() {}

        /** Not on three nodes: see the reason. */
        @Override
        @Test
        @Disabled("a nemesis that restarts three Cassandra nodes stalls the run for 40-50 s (minutes under load) per"
                + " restart: not within the CI budget; the node faults run in the fault matrix of this class, the"
                + " randomized run on one node (CassandraStoreFaultTest)")
        public void randomizedOperations_underRandomStoreFaults_keepTheHistoryConsistent() {}
    }

    /** One node of three is killed while lockers contend: every acquisition completes, exclusively. */
    @Test
    void oneNodeOfThreeKilledMidRun_locksKeepWorkingAtQuorum() throws Exception {
        String key = "kill-one-" + UUID.randomUUID();
        int threads = 4;
        int rounds = 20;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong counter = new AtomicLong();
        AtomicInteger done = new AtomicInteger();
        List<RemoteLocker> lockers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int i = 0; i < 2; i++) {
                lockers.add(RemoteLockers.builder()
                        .uri(uri(""))
                        .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(10)))
                        .build());
            }
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                RemoteLocker locker = lockers.get(t % 2);
                workers.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        try (RemoteLock lock = locker.lock(key, TestTimeouts.scaled(Duration.ofMinutes(2)))) {
                            if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            long read = counter.get();
                            Thread.yield();
                            counter.set(read + 1);
                            inside.decrementAndGet();
                        }
                        done.incrementAndGet();
                    }
                    return null;
                }));
            }
            Deadlines.await(
                    () -> done.get() >= threads * rounds / 4,
                    TestTimeouts.scaled(Duration.ofMinutes(2)),
                    () -> "no progress before the kill: " + done.get());
            CASSANDRA.node(2).kill9();
            for (Future<?> w : workers) {
                w.get(TestTimeouts.scaled(Duration.ofMinutes(4)).toMillis(), TimeUnit.MILLISECONDS);
            }
            assertThat(overlaps.get()).isZero();
            assertThat(counter.get()).isEqualTo((long) threads * rounds);
        } finally {
            pool.shutdownNow();
            lockers.forEach(RemoteLocker::close);
        }
    }

    /**
     * Two nodes of three killed: no quorum. A lock attempt fails cleanly at its deadline (an exception, not a hang, not
     * a silent success); after the nodes return, nothing of it is left and the key is free.
     */
    @Test
    void twoOfThreeKilled_lockFailsAtTheDeadline_andNothingIsHalfHeldAfterRecovery() throws Exception {
        String key = "kill-two-" + UUID.randomUUID();
        Duration lease = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(uri("connectTimeout=3s"))
                .leaseTime(lease)
                .build()) {
            locker.lock(key, Duration.ofSeconds(5)).close(); // warm: statements prepared, tables known
            CASSANDRA.node(1).kill9();
            CASSANDRA.node(2).kill9();
            Duration maxWait = Duration.ofSeconds(4);
            long start = System.nanoTime();
            Throwable failure = null;
            try {
                locker.lock(key, maxWait).close();
            } catch (LockException e) {
                failure = e;
            }
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(failure).as("a lock without quorum must fail").isNotNull();
            assertThat(tookMs).as("failed at the deadline, not before").isGreaterThanOrEqualTo(maxWait.toMillis() - 50);
            assertThat(tookMs)
                    .as("failed within the deadline plus one request timeout")
                    .isLessThan(maxWait.toMillis()
                            + TestTimeouts.scaled(Duration.ofSeconds(15)).toMillis());
        }
        CASSANDRA.resetFaults(); // both nodes back, every node sees every other
        try (CqlSession session = CASSANDRA.newSession();
                RemoteLocker other =
                        RemoteLockers.builder().uri(uri("")).leaseTime(lease).build()) {
            Deadlines.await(
                    () -> cells(session, key).isEmpty(),
                    TestTimeouts.scaled(Duration.ofSeconds(30)),
                    () -> "cells left behind: " + cells(session, key));
            Optional<RemoteLock> lock = other.tryLock(key);
            assertThat(lock).isPresent();
            lock.get().close();
            assertThat(cells(session, key)).isEmpty();
        }
    }

    private static List<String> cells(CqlSession session, String key) {
        return CassandraKitHooks.entries(session, key);
    }
}
