package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * The etcd backend: {@code etcd://host:port[,host:port...][/prefix]}, built on jetcd.
 *
 * <h2>URI and options</h2>
 * The hosts are the cluster's client endpoints (port 2379 when omitted; plain HTTP); the path is the key prefix of
 * every lock, default {@code /distlock}. Options, as query parameters, {@link io.distlock.RemoteLockerBuilder#option}
 * or typed through {@link EtcdLockOptions}:
 *
 * <ul>
 *   <li>{@value #MODE}: {@code fair} (default) or {@code cas}, see {@link EtcdLockMode}.
 *   <li>{@value #OPERATION_TIMEOUT}: how long one store operation may take, repeats after lost replies included;
 *       default the connect timeout.
 *   <li>{@code ttl} (common, default 30s): the TTL of the backend's etcd lease, rounded up to whole seconds (etcd
 *       counts seconds, and raises a TTL below its minimum, about 1.5 election timeouts). A crashed or cut-off
 *       holder's locks are freed one TTL after its last keep-alive.
 *   <li>{@code connectTimeout} (common, default 10s): how long opening waits for etcd to grant the first lease.
 * </ul>
 *
 * <h2>Guarantees</h2>
 * Fencing tokens (the lock key's create revision), waiters woken by etcd's watches, the lease as a session ({@link
 * io.distlock.LeaseModel#SESSION}: one etcd lease per locker, kept alive every third of its TTL), and in fair mode
 * FIFO order and mutual exclusion with {@code etcdctl lock <prefix>/<name>}.
 *
 * <p>Opening blocks until etcd has granted the locker's lease, at most {@code connectTimeout}, and throws a {@link
 * LockBackendException} naming the endpoints if that fails; a malformed URI or option throws {@link
 * LockConfigurationException}. TLS ({@code etcd+https}) is not offered: see the module's documentation.
 */
public final class EtcdLockBackendProvider implements LockBackendProvider {

    /** Option: {@code fair} (default) or {@code cas}; see {@link EtcdLockMode}. */
    public static final String MODE = "mode";

    /** Option: how long one store operation may take, retries included; default the connect timeout. */
    public static final String OPERATION_TIMEOUT = "operationTimeout";

    private static final AtomicInteger BACKENDS = new AtomicInteger();

    /** Adjusts each backend's jetcd client builder: identity, except for tests that intercept requests. */
    private final UnaryOperator<ClientBuilder> adjustClient;

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public EtcdLockBackendProvider() {
        this(UnaryOperator.identity());
    }

    /** A provider whose backends' jetcd client builders go through {@code adjustClient} (e.g. adding an interceptor). */
    EtcdLockBackendProvider(UnaryOperator<ClientBuilder> adjustClient) {
        this.adjustClient = adjustClient;
    }

    /** {@code etcd}. */
    @Override
    public String name() {
        return "etcd";
    }

    /** {@code etcd}. */
    @Override
    public Set<String> uriSchemes() {
        return Set.of("etcd");
    }

    /**
     * Connects to the cluster and grants the locker's lease; blocks at most for the connect timeout.
     *
     * @throws LockConfigurationException if the URI or an option is malformed
     * @throws LockBackendException if etcd did not grant a lease within the connect timeout
     */
    @Override
    public LockBackend open(BackendConfig config) {
        EtcdLocation location = EtcdLocation.parse(config.uri());
        EtcdLockMode mode = config.option(MODE).map(EtcdLockMode::parse).orElse(EtcdLockMode.FAIR);
        Duration connectTimeout = config.connectTimeout();
        Duration operationTimeout = config.durationOption(OPERATION_TIMEOUT, connectTimeout);
        long ttlSeconds = ttlSeconds(config.leaseTime());
        config.rejectUnknownOptions(name());

        Client client = adjustClient
                .apply(Client.builder()
                        .endpoints(location.endpoints().toArray(String[]::new))
                        .connectTimeout(connectTimeout)
                        // EtcdCalls repeats what may be repeated, within operationTimeout; jetcd's own retry would
                        // repeat it again past that (and refuses an operationTimeout below its 500 ms retry delay).
                        .retryMaxAttempts(0))
                .build();
        int n = BACKENDS.incrementAndGet();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-etcd-" + n);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        EtcdCalls calls = new EtcdCalls(client, String.join(",", location.endpoints()), config.ticker(), timer);
        Sessions sessions = new Sessions(calls, ttlSeconds, operationTimeout);
        try {
            sessions.grant(Deadline.after(connectTimeout, config.ticker())).get();
            return new EtcdLockBackend(
                    client, location, mode, operationTimeout, connectTimeout, calls, sessions, timer);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close(client, timer);
            throw new LockBackendException("Interrupted while connecting to etcd at " + location.describe(), e);
        } catch (ExecutionException | RuntimeException e) {
            close(client, timer);
            Throwable cause = EtcdCalls.unwrap(e);
            throw new LockBackendException(
                    "Could not open a session with etcd at " + String.join(",", location.endpoints()) + " within "
                            + connectTimeout + " (option connectTimeout): " + cause.getMessage()
                            + "; is the cluster running and reachable from here?",
                    cause);
        }
    }

    private static void close(Client client, ScheduledThreadPoolExecutor timer) {
        try {
            client.close();
        } finally {
            timer.shutdownNow();
        }
    }

    /** etcd lease TTLs are whole seconds: the lease time rounded up, at least 1. */
    static long ttlSeconds(Duration leaseTime) {
        long millis = leaseTime.toMillis();
        long seconds = (millis + 999) / 1000;
        if (seconds > Integer.MAX_VALUE) {
            throw new LockConfigurationException("Option 'ttl' is too long for an etcd lease: " + leaseTime
                    + " (at most " + Integer.MAX_VALUE + " seconds)");
        }
        return Math.max(1, seconds);
    }
}
