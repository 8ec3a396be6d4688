package io.distlock.cassandra;

import io.distlock.kit.CrossProcessExclusionContract;
import io.distlock.kit.FaultMatrixContract;
import io.distlock.kit.FencingContract;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.kit.ProgressContract;
import io.distlock.testing.CassandraCluster;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A three-node cluster with RF = 3, forked once for the class: the parts of the conformance kit that three replicas
 * change, for the queue algorithm with fencing (every path of the queue without fencing is a part of it): exclusion,
 * within this JVM and across worker processes, and progress with every read and write at QUORUM, the fencing counter's
 * Paxos rounds on three replicas, and the kit's fault matrix: a minority of nodes killed during a contended run (QUORUM
 * rides it out), a majority killed (calls fail by their deadline, nothing is half held after recovery). The rest of the
 * kit (leases, fixed leases, handles, bad input, several keys, clocks, killed and frozen worker processes, the fenced
 * resource) runs with fencing on one node ({@link CassandraSingleNodeTest}), the store faults and the randomized run on
 * a dedicated one ({@link CassandraStoreFaultTest}): the client sends the same statements there, and one node forks in
 * a fraction of three's time.
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
    class FencedQueueKit
            implements MutualExclusionContract,
                    ProgressContract,
                    FencingContract,
                    CrossProcessExclusionContract,
                    FaultMatrixContract,
                    CassandraKitHooks {
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
    }
}
