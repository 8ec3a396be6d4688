package io.distlock.etcd;

import io.distlock.RemoteLockerBuilder;
import io.distlock.kit.LeaseContract;
import io.distlock.kit.LockHandleContract;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.spi.LockBackendProvider;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's core contracts (exclusion, leases, lock handles) through {@link EtcdLockers#using}: every locker on one
 * jetcd client the test configured as an application would (TLS, client certificate, etcd user), on a secured etcd.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EtcdLockersConformanceTest implements MutualExclusionContract, LeaseContract, LockHandleContract {

    private static final String PREFIX = "/kit-own";
    private static final SecuredEtcd SECURED = SecuredEtcd.create("own-client");

    @RegisterExtension
    static final io.distlock.testing.EtcdCluster ETCD = SECURED.etcd;

    private static Client client;

    @BeforeAll
    static void connect() {
        SECURED.addLocker(PREFIX);
        client = SECURED.client(SecuredEtcd.LOCKER, SECURED.lockerPassword);
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    /** What the locker reports as its URI; the provider is bound to the client. */
    @Override
    public String lockerUri() {
        return "etcd:" + PREFIX;
    }

    @Override
    public RemoteLockerBuilder lockerBuilder() {
        return EtcdLockers.using(client, PREFIX);
    }

    /** The kit's direct backends use the same client. */
    @Override
    public LockBackendProvider provider() {
        return new ApplicationClientProvider(client);
    }

    @Override
    public MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.unsupported("a jetcd Client object cannot be handed to another process");
    }

    @Override
    public Duration sessionTimeout() {
        return EtcdTesting.sessionTimeout(shortLeaseTime());
    }

    @Override
    public Optional<List<String>> storeEntries(String key) {
        return Optional.of(EtcdTesting.keysOfEveryKind(client, PREFIX, key, EtcdLockMode.FAIR));
    }
}
