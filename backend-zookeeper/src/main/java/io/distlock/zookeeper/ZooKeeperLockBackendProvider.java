package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.DurationText;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.CloseableUtils;

/**
 * The ZooKeeper backend: {@code zk://host:port[,host:port...][/base/path]} (or {@code zookeeper://...}), built on
 * Apache Curator.
 *
 * <h2>URI and options</h2>
 * The hosts form the connect string (port 2181 when omitted); the path is the base path under which each key gets
 * its lock node, default {@code /distlock}. Options, as query parameters or {@link
 * io.distlock.RemoteLockerBuilder#option}:
 *
 * <ul>
 *   <li>{@value #SESSION_TIMEOUT}: the ZooKeeper session timeout asked for, default the locker's lease time ({@code
 *       ttl}, 30s). The server bounds it by its {@code minSessionTimeout}/{@code maxSessionTimeout} (by default 2 to
 *       20 ticks); the timeout it grants is the lease of every lock: how long the locks of a crashed or cut-off holder
 *       stay held.
 *   <li>{@code connectTimeout} (common to all backends, default 10s): how long opening waits for a connection, and
 *       the longest a single store operation (tryLock, release) waits for an answer.
 * </ul>
 *
 * <h2>Guarantees</h2>
 * FIFO-fair, waiters woken by the server (each watches only its predecessor), fencing tokens (the lock node's {@code
 * czxid}), the session as the lease ({@link io.distlock.LeaseModel#SESSION}). A key is encoded into one node name by
 * percent-encoding (see the module's README); its lock nodes follow Curator's {@code InterProcessMutex} layout, so a
 * Curator mutex on {@code <basePath>/<encoded key>} and distlock exclude each other.
 *
 * <p>Opening blocks until connected, at most {@code connectTimeout}, and throws a {@link LockBackendException} naming
 * the connect string if that fails; a malformed URI or option throws {@link LockConfigurationException}.
 */
public final class ZooKeeperLockBackendProvider implements LockBackendProvider {

    /** Option: the ZooKeeper session timeout to ask for; default the locker's lease time. */
    public static final String SESSION_TIMEOUT = "sessionTimeout";

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public ZooKeeperLockBackendProvider() {}

    /** {@code zookeeper}. */
    @Override
    public String name() {
        return "zookeeper";
    }

    /** {@code zk} and {@code zookeeper}. */
    @Override
    public Set<String> uriSchemes() {
        return Set.of("zk", "zookeeper");
    }

    /**
     * Connects to the ensemble; blocks until connected, at most for the connect timeout.
     *
     * @throws LockConfigurationException if the URI or an option is malformed
     * @throws LockBackendException if no server answered within the connect timeout
     */
    @Override
    public LockBackend open(BackendConfig config) {
        ZkLocation location = ZkLocation.parse(config.uri());
        Duration sessionTimeout = config.durationOption(SESSION_TIMEOUT, config.leaseTime());
        Duration connectTimeout = config.connectTimeout();
        int sessionMs = millis(SESSION_TIMEOUT, sessionTimeout);
        int connectMs = millis("connectTimeout", connectTimeout);
        config.rejectUnknownOptions(name());

        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(location.connectString())
                .sessionTimeoutMs(sessionMs)
                // Curator warns when the session timeout is below its connection timeout; a connection attempt longer
                // than the session is pointless anyway (opening still waits up to connectTimeout, over retries).
                .connectionTimeoutMs(Math.min(connectMs, sessionMs))
                .retryPolicy(new RetryNTimes(0, 0)) // calls are repeated after reconnections by the backend itself
                .ensembleTracker(false)
                .build();
        try {
            client.start();
            if (!client.blockUntilConnected(connectMs, TimeUnit.MILLISECONDS)) {
                throw new LockBackendException("Could not connect to ZooKeeper at " + location.connectString()
                        + " within " + DurationText.of(connectTimeout)
                        + " (option connectTimeout); is the ensemble running and"
                        + " reachable from here?");
            }
            return new ZooKeeperLockBackend(client, location, sessionTimeout, connectTimeout, config.ticker());
        } catch (InterruptedException e) {
            CloseableUtils.closeQuietly(client);
            Thread.currentThread().interrupt();
            throw new LockBackendException(
                    "Interrupted while connecting to ZooKeeper at " + location.connectString(), e);
        } catch (RuntimeException e) {
            CloseableUtils.closeQuietly(client);
            if (e instanceof LockBackendException) {
                throw e;
            }
            throw new LockBackendException(
                    "Could not connect to ZooKeeper at " + location.connectString() + ": " + e, e);
        }
    }

    private static int millis(String option, Duration d) {
        long ms = d.toMillis();
        if (ms < 1 || ms > Integer.MAX_VALUE) {
            throw new LockConfigurationException("Option '" + option + "' must be between 1ms and " + Integer.MAX_VALUE
                    + "ms, got " + DurationText.of(d));
        }
        return (int) ms;
    }
}
