package io.distlock.etcd;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.StoreFaults;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;

/** What the etcd kit classes (fair and cas, on three members) share: the URI and the kit's hooks. */
abstract class EtcdKit extends LockerConformanceTests {

    static final String PREFIX = "/kit";

    /** Reads the lock keys for the kit's "nothing left behind" checks, beside the backend's own client. */
    private Client inspector;

    abstract EtcdCluster etcd();

    abstract EtcdLockMode mode();

    private String query() {
        return "?mode=" + mode().optionValue();
    }

    @Override
    public String lockerUri() {
        return EtcdTesting.uri(etcd(), PREFIX) + query();
    }

    /** Port 1 on loopback: nothing listens there. */
    @Override
    public Optional<String> unreachableUri() {
        return Optional.of("etcd://127.0.0.1:1" + PREFIX + query());
    }

    /**
     * Worker JVMs start cold on a machine the kit loads with several of them at once: their first lease grant (jetcd's
     * gRPC and Vert.x set up on first use) gets the kit's startup allowance rather than the 10 s default.
     */
    @Override
    public MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.uri(lockerUri() + "&connectTimeout="
                + TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis() + "ms");
    }

    /** Every member stopped and started, a lock's key deleted as {@code etcdctl del} would. */
    @Override
    public Optional<StoreFaults> storeFaults() {
        return Optional.of(new EtcdStoreFaults(etcd(), PREFIX, mode()));
    }

    @Override
    public Duration sessionTimeout() {
        return EtcdTesting.sessionTimeout(shortLeaseTime());
    }

    /**
     * Fair mode: the queue keys {@code /kit/<name>/<lease>}, and those of the read-write lock and the semaphore on the
     * key; cas mode: the one key {@code /kit/<name>} if present.
     */
    @Override
    public Optional<List<String>> storeEntries(String key) {
        return Optional.of(EtcdTesting.keysOfEveryKind(inspector(), PREFIX, key, mode()));
    }

    private synchronized Client inspector() {
        if (inspector == null) {
            inspector = Client.builder()
                    .endpoints(etcd().clientEndpoints().toArray(String[]::new))
                    .build();
        }
        return inspector;
    }

    @AfterEach
    synchronized void closeInspector() {
        if (inspector != null) {
            inspector.close();
            inspector = null;
        }
    }
}
