package io.distlock.shedlock;

import io.distlock.LockBackendException;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.CassandraCluster;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's scenarios on one Cassandra node (a forked server, started once for this class: keep it the module's only
 * Cassandra class).
 */
class CassandraLockProviderTest extends LockProviderScenarios {

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().withNodes(1).build();

    @Override
    String lockerUri() {
        return "cassandra://" + CASSANDRA.contactPointsString() + "/" + CASSANDRA.keyspace() + "?localDatacenter="
                + CASSANDRA.localDatacenter() + "&createSchema=true";
    }

    /** Cassandra's TTLs count whole seconds: a lease is written with its whole seconds plus one, so a crashed holder's entry may stay up to 2 s longer. */
    @Override
    Duration storeRounding() {
        return Duration.ofSeconds(2);
    }

    /** The backend's default clock-drift allowance: 100 ms, at most a tenth of the lease. */
    @Override
    Duration driftAllowance(Duration lockAtMostFor) {
        Duration tenth = lockAtMostFor.dividedBy(10);
        return tenth.compareTo(Duration.ofMillis(100)) < 0 ? tenth : Duration.ofMillis(100);
    }

    /**
     * Creates the lock tables before the two nodes open: a schema change can outlast the default connect timeout on a
     * loaded machine, so it gets a minute per attempt and is tried again (the statements are idempotent).
     */
    @Override
    void prepareStore() {
        long deadline =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofMinutes(4)).toNanos();
        while (true) {
            try {
                RemoteLockers.open(lockerUri() + "&connectTimeout=60s").close();
                return;
            } catch (LockBackendException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
            }
        }
    }
}
