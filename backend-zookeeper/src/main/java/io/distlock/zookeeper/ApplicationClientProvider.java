package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.TlsSettings;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * The ZooKeeper backend on an application's {@link CuratorFramework} (see {@link ZooKeeperLockers}): the client's
 * connection, credentials, ACL provider and session; closing the backend leaves the client open.
 */
final class ApplicationClientProvider implements LockBackendProvider {

    /** The URI backend's name and schemes: a locker on the application's client is the same backend. */
    private static final LockBackendProvider BY_URI = new ZooKeeperLockBackendProvider();

    /** Options the application's client already settles. */
    private static final List<String> SETTLED_BY_CLIENT = List.of(
            ZooKeeperLockOptions.USER,
            ZooKeeperLockOptions.PASSWORD,
            ZooKeeperLockOptions.PASSWORD + "File",
            ZooKeeperLockOptions.PASSWORD + "Env",
            ZooKeeperLockOptions.ADMIN_ACL,
            ZooKeeperLockOptions.SESSION_TIMEOUT,
            TlsSettings.TLS,
            TlsSettings.CA_FILE,
            TlsSettings.CERT_FILE,
            TlsSettings.KEY_FILE,
            TlsSettings.VERIFY_HOST);

    private final CuratorFramework client;
    private final ZkLocation location;

    ApplicationClientProvider(CuratorFramework client, ZkLocation location) {
        this.client = client;
        this.location = location;
    }

    @Override
    public String name() {
        return BY_URI.name();
    }

    @Override
    public Set<String> uriSchemes() {
        return BY_URI.uriSchemes();
    }

    /**
     * Waits for the client's connection, at most the connect timeout, and checks it may lock under the base path.
     *
     * @throws LockConfigurationException if an option the client settles is given, or the client is not started
     * @throws LockBackendException if the client does not connect in time or may not lock under the base path
     */
    @Override
    public LockBackend open(BackendConfig config) {
        Set<String> settled = new TreeSet<>();
        for (String option : SETTLED_BY_CLIENT) {
            config.option(option).ifPresent(v -> settled.add(option));
        }
        if (!settled.isEmpty()) {
            throw new LockConfigurationException("Option" + (settled.size() > 1 ? "s " : " ") + settled
                    + " cannot be given for a locker on the application's ZooKeeper client: the client already has"
                    + " its connection, credentials, ACL provider and session; configure them on the client");
        }
        Optional<Duration> tickTime = ZooKeeperLockBackendProvider.tickTime(config);
        config.rejectUnknownOptions(name());
        if (client.getState() != CuratorFrameworkState.STARTED) {
            throw new LockConfigurationException("The ZooKeeper client given to ZooKeeperLockers.using is "
                    + client.getState() + "; start it (and close it after the locker): the locker does neither");
        }
        Duration connectTimeout = config.connectTimeout();
        try {
            if (!client.blockUntilConnected((int) Math.max(1, connectTimeout.toMillis()), TimeUnit.MILLISECONDS)) {
                throw new LockBackendException("The application's ZooKeeper client (" + location.connectString()
                        + ") did not connect within " + DurationText.of(connectTimeout) + " (option connectTimeout)");
            }
            ZkAccessCheck.run(
                    client,
                    location.connectString(),
                    location.basePath(),
                    Optional.empty(),
                    "the application's client (authenticated as it was configured)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted waiting for the application's ZooKeeper client", e);
        } catch (LockBackendException e) {
            throw e;
        } catch (Exception e) {
            throw new LockBackendException(
                    "The application's ZooKeeper client (" + location.connectString()
                            + ") could not check the base path " + location.basePath() + ": " + e,
                    e);
        }
        int negotiatedMs = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        Duration sessionTimeout = negotiatedMs > 0 ? Duration.ofMillis(negotiatedMs) : config.leaseTime();
        // The application's client: nothing of it is closed with the backend.
        // Its session was created before this backend saw it: it is confirmed by heartbeats as the backend starts.
        return new ZooKeeperLockBackend(
                client,
                location,
                sessionTimeout,
                tickTime,
                ZkSession.NONE,
                connectTimeout,
                config.lockDelay(),
                config.ticker(),
                () -> {});
    }
}
