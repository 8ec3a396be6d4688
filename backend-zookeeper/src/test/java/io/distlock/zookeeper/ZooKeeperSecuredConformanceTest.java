package io.distlock.zookeeper;

import io.distlock.kit.CrossProcessExclusionContract;
import io.distlock.kit.LeaseContract;
import io.distlock.kit.MutualExclusionContract;
import io.distlock.testing.TestPki;
import io.distlock.testing.ZooKeeperEnsemble;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kit's exclusion and lease contracts and its exclusion across worker processes (`CrossProcessExclusionContract`) over a secured connection: mutual TLS to the server's secure
 * port and a digest login, the password given by file (so the URI the worker processes get carries none), the lock
 * nodes under an ACL of the locker's identity.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ZooKeeperSecuredConformanceTest implements MutualExclusionContract, LeaseContract, CrossProcessExclusionContract {

    private static final String BASE = "/secured-kit";
    private static final TestPki PKI = SecuredZk.pki("zk-kit-pki");
    private static final Path PASSWORD = SecuredZk.passwordFile("kit-secret-7");

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().tls(PKI).build();

    /** Reads the lock nodes over the plaintext port for the kit's "nothing left behind" checks (READ is open). */
    private static CuratorFramework reader;

    @BeforeAll
    static void connect() throws InterruptedException {
        reader = CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100));
        reader.start();
        reader.blockUntilConnected();
    }

    @AfterAll
    static void disconnect() {
        reader.close();
    }

    @Override
    public String lockerUri() {
        return "zk://" + ZK.secureConnectString() + BASE + "?user=" + SecuredZk.USER + "&passwordFile=" + PASSWORD + "&"
                + SecuredZk.tlsOptions(PKI);
    }

    @Override
    public Optional<List<String>> storeEntries(String key) {
        try {
            return Optional.of(reader.getChildren().forPath(ZKPaths.makePath(BASE, KeyCodec.encode(key))));
        } catch (KeeperException.NoNodeException e) {
            return Optional.of(List.of());
        } catch (Exception e) {
            throw new IllegalStateException("Cannot list the lock nodes of '" + key + "'", e);
        }
    }
}
