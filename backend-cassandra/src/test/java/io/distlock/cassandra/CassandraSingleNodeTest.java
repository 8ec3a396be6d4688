package io.distlock.cassandra;

import io.distlock.kit.AbandonedAttemptContract;
import io.distlock.kit.InspectionContract;
import io.distlock.kit.LockDelayContract;
import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.testing.CassandraCluster;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against one Cassandra node (shared with the backend's own tests, {@link OneNodeFixture}, a
 * keyspace per class): the whole kit for the queue algorithm with {@code fencing=true} (which runs every step of the
 * queue without fencing too, plus the token), the exclusion and abandoned-attempt contracts without fencing (where a
 * grant is handed over with no step after it), and the exclusion, inspection and lock-delay contracts for the legacy
 * algorithm (which offers breaking a key, not looking it up, and reads no release requests). The inspection contract runs here only, once per algorithm.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CassandraSingleNodeTest {

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().withNodes(1).build();

    @BeforeAll
    static void schema() {
        CassandraKitHooks.createSchema(CASSANDRA);
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
    }

    /** Without fencing a grant is handed over as soon as the queue gives it: exclusion and abandoned attempts. */
    @Nested
    class QueueKit implements MutualExclusionContract, AbandonedAttemptContract, CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return "";
        }
    }

    /** Legacy keeps a lock-delay too (its main cell's TTL); it reads no release requests. */
    @Nested
    class LegacyKit implements MutualExclusionContract, InspectionContract, LockDelayContract, CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return "algorithm=legacy";
        }

        /** Listing 4's back-off (up to a second per try) makes every contended acquisition slow. */
        @Override
        public int acquisitionsPerThread() {
            return 10;
        }
    }
}
