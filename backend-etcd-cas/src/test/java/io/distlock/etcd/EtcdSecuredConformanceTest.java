package io.distlock.etcd;

import io.distlock.kit.CrossProcessExclusionContract;
import io.distlock.kit.LeaseContract;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.kit.TestTimeouts;
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
 * The kit's exclusion and lease contracts and its exclusion across worker processes (`CrossProcessExclusionContract`) over a secured connection ({@code etcd+https}, the locker's
 * client certificate, its etcd user and a password file), fair mode, against an etcd that serves TLS only, requires
 * client certificates and has authentication on. The worker processes open the same URI.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class EtcdSecuredConformanceTest implements MutualExclusionContract, LeaseContract, CrossProcessExclusionContract {

    private static final String PREFIX = "/kit-tls";
    private static final SecuredEtcd SECURED = SecuredEtcd.create("kit");

    @RegisterExtension
    static final io.distlock.testing.EtcdCluster ETCD = SECURED.etcd;

    private static String uri;
    private static Client root;

    @BeforeAll
    static void addLocker() {
        SECURED.addLocker(PREFIX);
        uri = SECURED.lockerUri(PREFIX, EtcdLockMode.FAIR);
        root = SECURED.rootClient();
    }

    @AfterAll
    static void closeRoot() {
        root.close();
    }

    @Override
    public String lockerUri() {
        return uri;
    }

    /** Cold worker JVMs get the kit's startup allowance for their first (TLS and authentication) round trip. */
    @Override
    public MultiProcessSupport multiProcessSupport() {
        return MultiProcessSupport.uri(uri + "&connectTimeout="
                + TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis() + "ms");
    }

    @Override
    public Duration sessionTimeout() {
        return EtcdTesting.sessionTimeout(shortLeaseTime());
    }

    @Override
    public Optional<List<String>> storeEntries(String key) {
        return Optional.of(EtcdTesting.keysOfEveryKind(root, PREFIX, key, EtcdLockMode.FAIR));
    }
}
