package io.distlock.cassandra;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.testing.CassandraCluster;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A three-node cluster with RF = 3, forked once for the class: the conformance kit for the queue algorithm with
 * fencing (every path of the queue without fencing is a part of it), with the kit's fault matrix: a minority of
 * nodes killed during a contended run (QUORUM rides it out), a majority killed (calls fail by their deadline, nothing
 * is half held after recovery).
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
        @Disabled("stopping and starting the whole three-node cluster takes about 40 s on 2 cores, and to the client"
                + " it is the same outage as one node's (every contact point down); the one-node class runs it"
                + " (CassandraStoreFaultTest)")
        public void storeDown_tryLock_lock_andLockWithoutDeadline_failWithBackendException_withinConnectTimeout() {}

        /** Not on three nodes: see the reason. */
        @Override
        @Test
        @Disabled("a nemesis that restarts three Cassandra nodes stalls the run for 40-50 s (minutes under load) per"
                + " restart: not within the CI budget; the node faults run in the fault matrix of this class, the"
                + " randomized run on one node (CassandraStoreFaultTest)")
        public void randomizedOperations_underRandomStoreFaults_keepTheHistoryConsistent() {}
    }
}
