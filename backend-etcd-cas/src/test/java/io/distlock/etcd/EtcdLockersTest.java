package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link EtcdLockers#using}: the application's client stays the application's. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdLockersTest {

    private static final String PREFIX = "/own";
    private static final SecuredEtcd SECURED = SecuredEtcd.create("own");

    @RegisterExtension
    static final EtcdCluster ETCD = SECURED.etcd;

    private static Client root;

    @BeforeAll
    static void users() {
        SECURED.addLocker(PREFIX);
        root = SECURED.rootClient();
    }

    @AfterAll
    static void closeRoot() {
        root.close();
    }

    @Test
    void close_leavesTheClientOpenAndUsable_andRevokesOnlyTheLockersLease() throws Exception {
        try (Client client = SECURED.client(SecuredEtcd.LOCKER, SECURED.lockerPassword)) {
            int leasesBefore = SECURED.leases();
            RemoteLocker locker = EtcdLockers.using(client, PREFIX)
                    .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                    .option(EtcdLockBackendProvider.MODE, "cas")
                    .build();
            String key = EtcdTesting.unique("own");
            RemoteLock held = locker.tryLock(key).orElseThrow();
            assertThat(locker.toString()).contains("etcd");
            assertThat(SECURED.leases()).isEqualTo(leasesBefore + 1);
            locker.close(); // a lock still held: its key goes with the locker's lease

            assertThat(held.isHeld()).isFalse();
            assertThat(SECURED.keysUnder(root, PREFIX)).isEmpty();
            assertThat(SECURED.leases()).isEqualTo(leasesBefore);
            ByteSequence probe = ByteSequence.from(PREFIX + "/after-close", StandardCharsets.UTF_8);
            client.getKVClient()
                    .put(probe, ByteSequence.from("still usable", StandardCharsets.UTF_8))
                    .get(10, TimeUnit.SECONDS);
            assertThat(client.getKVClient().get(probe).get(10, TimeUnit.SECONDS).getCount())
                    .isEqualTo(1);
            client.getKVClient().delete(probe).get(10, TimeUnit.SECONDS);

            try (RemoteLocker again = EtcdLockers.using(client, PREFIX).build()) {
                again.tryLock(key).orElseThrow().release();
            }
        }
    }

    @Test
    void using_withConnectionOptions_refusesThem() {
        try (Client client = SECURED.client(SecuredEtcd.LOCKER, SECURED.lockerPassword)) {
            assertThatThrownBy(() -> EtcdLockers.using(client, PREFIX)
                            .option("user", "other")
                            .option("password", "secret-value")
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("[user, password]")
                    .hasMessageContaining("application's own jetcd Client")
                    .hasMessageNotContaining("secret-value");
            assertThatThrownBy(() -> EtcdLockers.using(client, PREFIX)
                            .option("caFile", "/etc/ca.pem")
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("caFile");
        }
    }

    @Test
    void using_withPrefixNotStartingWithSlash_failsNamingIt() {
        try (Client client = SECURED.client(SecuredEtcd.LOCKER, SECURED.lockerPassword)) {
            assertThatThrownBy(() -> EtcdLockers.using(client, "locks"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("must start with '/'");
            assertThatThrownBy(() -> EtcdLockers.using(client, "/a//b"))
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("empty segment");
        }
    }
}
