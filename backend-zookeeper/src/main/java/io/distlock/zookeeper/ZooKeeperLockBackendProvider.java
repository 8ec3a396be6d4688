package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.HostList;
import io.distlock.toolkit.TlsSettings;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
 * io.distlock.RemoteLockerBuilder#option}, or typed with {@link ZooKeeperLockOptions}:
 *
 * <ul>
 *   <li>{@value ZooKeeperLockOptions#SESSION_TIMEOUT}: the ZooKeeper session timeout asked for, default the locker's
 *       lease time ({@code ttl}, 30s). The server bounds it by its {@code minSessionTimeout}/{@code maxSessionTimeout}
 *       (by default 2 to 20 ticks); the timeout it grants is the lease of every lock: how long the locks of a crashed
 *       or cut-off holder stay held.
 *   <li>{@value ZooKeeperLockOptions#TICK_TIME}: the ensemble's {@code tickTime}, default 3s (ZooKeeper's) or half the
 *       session timeout if less. A follower tells the leader of the sessions it heard from every half tick, so a
 *       heartbeat counts toward a lock's validity only half a tick after its answer; a tick longer than assumed would
 *       make the validity too generous on an ensemble.
 *   <li>{@code connectTimeout} (common to all backends, default 10s): how long opening waits for a connection, and
 *       the longest a single store operation (tryLock, release) waits for an answer.
 *   <li>{@code user} and {@code password} (or {@code passwordFile}: the first line of a file; {@code passwordEnv}: an
 *       environment variable): ZooKeeper digest authentication. The nodes distlock creates (the base path when
 *       missing, each key's node, the lock nodes) then get an ACL granting everything to that identity ({@code
 *       digest:user:base64(sha1(user:password))}) and to the {@code adminAcl} ids, and READ to anyone else: no other
 *       client can delete a held lock's node. Without them, nodes are open to everyone, as before.
 *   <li>{@value ZooKeeperLockOptions#ADMIN_ACL}: further ids granted everything on those nodes, {@code
 *       scheme:id[,scheme:id...]}, e.g. {@code digest:admin:<base64 sha1>} or {@code sasl:admin}.
 *   <li>{@code tls=true}, {@code caFile}, {@code certFile} + {@code keyFile}, {@code verifyHost} (see {@link
 *       TlsSettings}): TLS to the servers' {@code secureClientPort}, through the ZooKeeper client's own TLS settings
 *       (Netty socket, PEM files), set for this client only.
 * </ul>
 *
 * <p>Opening checks that the client may lock under the base path (it creates and deletes one node there), so a wrong
 * password or a missing permission fails at once, naming the cause, rather than at the first lock.
 *
 * <h2>Guarantees</h2>
 * FIFO-fair, waiters woken by the server (each watches only its predecessor), fencing tokens (the lock node's {@code
 * czxid}), the session as the lease ({@link io.distlock.LeaseModel#SESSION}). A key is encoded into one node name by
 * percent-encoding (see docs/zookeeper.md); its lock nodes follow Curator's {@code InterProcessMutex} layout, so a
 * Curator mutex on {@code <basePath>/<encoded key>} and distlock exclude each other.
 *
 * <p>Opening blocks until connected, at most {@code connectTimeout}, and throws a {@link LockBackendException} naming
 * the connect string if that fails; a malformed URI or option throws {@link LockConfigurationException}. An
 * application that already has a started {@code CuratorFramework} passes it to {@link ZooKeeperLockers#using}
 * instead.
 */
public final class ZooKeeperLockBackendProvider implements LockBackendProvider {

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
     * Connects to the ensemble; blocks until connected and the base path checked, at most for the connect timeout.
     *
     * @throws LockConfigurationException if the URI or an option is malformed, or a file option names no readable file
     * @throws LockBackendException if no server answered within the connect timeout, a TLS handshake failed (naming
     *     why), or the client may not lock under the base path (authentication failed, permission denied)
     */
    @Override
    public LockBackend open(BackendConfig config) {
        ZkLocation location = ZkLocation.parse(config.uri());
        HostList hosts = ZkLocation.hosts(config.uri());
        Duration sessionTimeout = config.durationOption(ZooKeeperLockOptions.SESSION_TIMEOUT, config.leaseTime());
        Duration connectTimeout = config.connectTimeout();
        int sessionMs = millis(ZooKeeperLockOptions.SESSION_TIMEOUT, sessionTimeout);
        int connectMs = millis("connectTimeout", connectTimeout);
        Optional<Duration> tickTime = tickTime(config);
        Optional<ZkCredentials> credentials = ZkCredentials.read(config);
        Optional<TlsSettings> tlsSettings = TlsSettings.read(config, false);
        config.rejectUnknownOptions(name());

        Deadline deadline = Deadline.after(connectTimeout, config.ticker());
        Optional<ZkTls> tls = tlsSettings.map(ZkTls::create);
        CuratorFramework client = null;
        try {
            tls.ifPresent(t -> t.checkHandshake(hosts, deadline));
            CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                    .connectString(location.connectString())
                    .sessionTimeoutMs(sessionMs)
                    // Curator warns when the session timeout is below its connection timeout; a connection attempt
                    // longer than the session is pointless anyway (opening still waits up to connectTimeout).
                    .connectionTimeoutMs(Math.min(connectMs, sessionMs))
                    .retryPolicy(new RetryNTimes(0, 0)) // calls are repeated after reconnections by the backend itself
                    .ensembleTracker(false);
            credentials.ifPresent(
                    c -> builder.authorization(List.of(c.authInfo())).aclProvider(c.aclProvider(location.basePath())));
            tls.ifPresent(t -> builder.zkClientConfig(t.clientConfig()));
            client = builder.build();
            long startedNanos = config.ticker().read(); // before the session exists: its floor (see ZkSession)
            client.start();
            long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline.remainingNanos()));
            // A tenth of the time, at most 500 ms, is kept for asking the servers why, if no session comes.
            long probeMs = Math.min(ZkServerProbe.BUDGET_MILLIS, remainingMs / 10);
            long waitMs = Math.max(1, remainingMs - probeMs);
            if (!client.blockUntilConnected((int) Math.min(waitMs, Integer.MAX_VALUE), TimeUnit.MILLISECONDS)) {
                throw new LockBackendException("Could not connect to ZooKeeper at " + location.connectString()
                        + " within " + DurationText.of(connectTimeout) + " (option connectTimeout): "
                        + ZkServerProbe.why(hosts, Math.max(1, probeMs), tls.isPresent()));
            }
            ZkAccessCheck.run(
                    client,
                    location.connectString(),
                    location.basePath(),
                    credentials,
                    "a client without credentials (options '" + ZooKeeperLockOptions.USER + "' and '"
                            + ZooKeeperLockOptions.PASSWORD + "')");
            CuratorFramework owned = client;
            return new ZooKeeperLockBackend(
                    client,
                    location,
                    sessionTimeout,
                    tickTime,
                    startedNanos,
                    connectTimeout,
                    config.lockDelay(),
                    config.ticker(),
                    () -> {
                        CloseableUtils.closeQuietly(owned);
                        tls.ifPresent(ZkTls::close);
                    });
        } catch (InterruptedException e) {
            closeQuietly(client, tls);
            Thread.currentThread().interrupt();
            throw new LockBackendException(
                    "Interrupted while connecting to ZooKeeper at " + location.connectString(), e);
        } catch (LockBackendException | LockConfigurationException e) {
            closeQuietly(client, tls);
            throw e;
        } catch (Exception e) {
            closeQuietly(client, tls);
            throw new LockBackendException(
                    "Could not connect to ZooKeeper at " + location.connectString() + ": " + e, e);
        }
    }

    /**
     * Closes a client that failed to open, on a thread of its own: a ZooKeeper client that never connected ends only
     * after its connection thread's current attempt (it pauses up to a second between attempts), which would push the
     * failure past {@code connectTimeout} by as much.
     */
    private static void closeQuietly(CuratorFramework client, Optional<ZkTls> tls) {
        if (client == null) {
            tls.ifPresent(ZkTls::close);
            return;
        }
        Thread closing = new Thread(
                () -> {
                    CloseableUtils.closeQuietly(client);
                    tls.ifPresent(ZkTls::close);
                },
                "distlock-zookeeper-close");
        closing.setDaemon(true);
        closing.start();
    }

    /**
     * The {@value ZooKeeperLockOptions#TICK_TIME} option, if given.
     *
     * @throws LockConfigurationException if it is not a positive duration
     */
    static Optional<Duration> tickTime(BackendConfig config) {
        if (config.option(ZooKeeperLockOptions.TICK_TIME).isEmpty()) {
            return Optional.empty();
        }
        Duration tick = config.durationOption(ZooKeeperLockOptions.TICK_TIME, Duration.ZERO);
        if (tick.isNegative() || tick.isZero()) {
            throw new LockConfigurationException(
                    "Option '" + ZooKeeperLockOptions.TICK_TIME + "' must be positive, got " + DurationText.of(tick));
        }
        return Optional.of(tick);
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
