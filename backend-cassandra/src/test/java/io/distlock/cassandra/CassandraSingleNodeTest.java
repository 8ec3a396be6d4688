package io.distlock.cassandra;

import io.distlock.kit.FencingContract;
import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.CassandraCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
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

    static String uri(String options) {
        return "cassandra://" + CASSANDRA.contactPointsString() + "/" + CASSANDRA.keyspace() + "?localDatacenter="
                + CASSANDRA.localDatacenter() + "&createSchema=true" + (options.isEmpty() ? "" : "&" + options);
    }

    /** Cassandra TTLs count whole seconds: the expiry tests use 2 s leases (written with a 3 s TTL). */
    static Duration shortLease() {
        return TestTimeouts.scaled(Duration.ofSeconds(2));
    }

    @Nested
    class QueueKit extends LockerConformanceTests {
        @Override
        public String lockerUri() {
            return uri("");
        }

        @Override
        public Duration shortLeaseTime() {
            return shortLease();
        }
    }

    /**
     * Fencing adds one step after each grant; its contracts run here, and the whole kit with fencing runs on three
     * nodes ({@link CassandraThreeNodeTest}), which keeps this class within the build's time budget.
     */
    @Nested
    class FencedQueueKit implements FencingContract, MutualExclusionContract {
        @Override
        public String lockerUri() {
            return uri("fencing=true");
        }

        @Override
        public Duration shortLeaseTime() {
            return shortLease();
        }
    }

    @Nested
    class LegacyKit implements MutualExclusionContract {
        @Override
        public String lockerUri() {
            return uri("algorithm=legacy");
        }

        @Override
        public Duration shortLeaseTime() {
            return shortLease();
        }
    }
}
