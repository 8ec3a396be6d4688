package io.distlock.cassandra;

import io.distlock.kit.FencingContract;
import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.testing.CassandraCluster;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against one Cassandra node (shared with {@link CassandraQueueTest}, a keyspace per class):
 * the whole kit for the queue algorithm, its fencing and exclusion contracts with {@code fencing=true}, and the
 * exclusion contract for the legacy algorithm.
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
    class QueueKit extends LockerConformanceTests implements CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return "";
        }
    }

    /**
     * Fencing adds one step after each grant; its contracts run here, and the whole kit with fencing runs on three
     * nodes ({@link CassandraThreeNodeTest}), which keeps this class within the build's time budget.
     */
    @Nested
    class FencedQueueKit implements FencingContract, MutualExclusionContract, CassandraKitHooks {
        @Override
        public CassandraCluster cluster() {
            return CASSANDRA;
        }

        @Override
        public String options() {
            return "fencing=true";
        }
    }

    @Nested
    class LegacyKit implements MutualExclusionContract, CassandraKitHooks {
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
