package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The requests a lock costs: one transaction to take it, one to free it. */
class EtcdStoreRequestsTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void storeRequests_uncontendedAcquireAndRelease_countsTwoTxns(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("count");
        Duration ttl = Duration.ofSeconds(60); // first keep-alive after 20 s: none falls inside the measurement
        try (LockBackend backend = backend(mode, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            long before = backend.storeRequests().orElseThrow();
            Lease lease = backend.acquire(request(key, ttl), Deadline.after(maxWait(), Ticker.system()))
                    .orElseThrow();
            assertTrue(backend.release(lease));
            assertEquals(
                    2,
                    backend.storeRequests().orElseThrow() - before,
                    "one txn to take, one txn to free (a lock released at once never watches its own key)");
        }
    }
}
