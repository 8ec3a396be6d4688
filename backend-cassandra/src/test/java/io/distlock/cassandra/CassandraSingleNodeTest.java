package io.distlock.cassandra;

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
 * Everything that runs against one Cassandra node, forked once for the class: the conformance kit for the queue
 * algorithm without and with fencing, the exclusion tests for the legacy algorithm, and the backend's own tests (in
 * {@link CassandraBackendTests}).
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

    @Nested
    class FencedQueueKit extends LockerConformanceTests {
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
