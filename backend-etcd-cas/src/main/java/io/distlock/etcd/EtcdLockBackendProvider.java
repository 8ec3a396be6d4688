package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.DurationText;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The etcd backend: {@code etcd://host:port[,host:port...][/prefix]} (plaintext) or {@code
 * etcd+https://host:port[,host:port...][/prefix]} (TLS), built on jetcd. An application that already has a jetcd
 * {@code Client} passes it to {@link EtcdLockers#using} instead.
 *
 * <h2>URI and options</h2>
 * The hosts are the cluster's client endpoints (port 2379 when omitted); the path is the key prefix of every lock,
 * default {@code /distlock}. Options, as query parameters, {@link io.distlock.RemoteLockerBuilder#option} or typed
 * through {@link EtcdLockOptions}:
 *
 * <ul>
 *   <li>{@value #MODE}: {@code fair} (default) or {@code cas}, see {@link EtcdLockMode}.
 *   <li>{@value #OPERATION_TIMEOUT}: how long one store operation may take, repeats after lost replies included;
 *       default the connect timeout.
 *   <li>{@code ttl} (common, default 30s): the TTL of the backend's etcd lease, rounded up to whole seconds (etcd
 *       counts seconds, and raises a TTL below its minimum, about 1.5 election timeouts). A crashed or cut-off
 *       holder's locks are freed one TTL after its last keep-alive.
 *   <li>{@code lockDelay} (common, default none): the etcd lease is granted for the TTL plus the delay, rounded up to
 *       whole seconds, so a crashed or cut-off holder's locks are freed that much later; the holder's validity stays
 *       the TTL, and a release frees a lock at once (see {@link io.distlock.RemoteLockerBuilder#lockDelay}).
 *   <li>{@code connectTimeout} (common, default 10s): how long opening waits for etcd to grant the first lease.
 *   <li>{@code tls}, {@code caFile}, {@code certFile}, {@code keyFile} (common TLS options, see {@link
 *       io.distlock.toolkit.TlsSettings}): {@code etcd+https} (or {@code tls=true}) connects over TLS, trusting the PEM
 *       authorities of {@code caFile} (default the JVM's trust store) and presenting the PEM client certificate and
 *       key for etcd's {@code --client-cert-auth}. The member's certificate must name the host in the URI: gRPC
 *       always checks it, so {@code verifyHost=false} is refused.
 *   <li>{@code user} and {@code password} (or {@code passwordFile}, {@code passwordEnv}): etcd's own authentication;
 *       the user's roles need {@code readwrite} on the prefix ({@code --prefix=true}). Without a user, an etcd with
 *       authentication and client certificates on takes the certificate's common name as the user.
 * </ul>
 *
 * <h2>Guarantees</h2>
 * Fencing tokens (the lock key's create revision), waiters woken by etcd's watches, the lease as a session ({@link
 * io.distlock.LeaseModel#SESSION}: one etcd lease per locker, kept alive every third of its TTL), and in fair mode
 * FIFO order and mutual exclusion with {@code etcdctl lock <prefix>/<name>}.
 *
 * <p>Opening blocks until etcd has granted the locker's lease, at most {@code connectTimeout}, and throws a {@link
 * LockBackendException} naming the endpoints and the cause if that fails (certificate not trusted, authentication
 * failed, permission denied on the prefix, no TLS where TLS was asked for); a member that speaks TLS to a plaintext
 * client, or plaintext to a TLS one, is reported at once (within a few round trips), not at {@code connectTimeout}.
 * A malformed URI or option, or a missing TLS file, throws {@link LockConfigurationException}. A password never
 * appears in a message.
 */
public final class EtcdLockBackendProvider implements LockBackendProvider {

    /** Option: {@code fair} (default) or {@code cas}; see {@link EtcdLockMode}. */
    public static final String MODE = "mode";

    /** Option: how long one store operation may take, retries included; default the connect timeout. */
    public static final String OPERATION_TIMEOUT = "operationTimeout";

    private static final AtomicInteger BACKENDS = new AtomicInteger();

    /** The bound of asking a member which protocol it speaks (a connection and one answer), within connectTimeout. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    /** The backend's name, whichever client it is on. */
    private static final String NAME = "etcd";

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
        return NAME;
    }

    /** {@code etcd} and {@code etcd+https}. */
    @Override
    public Set<String> uriSchemes() {
        return Set.of(EtcdLocation.SCHEME, EtcdLocation.TLS_SCHEME);
    }

    /**
     * Connects to the cluster, checks that the locker may write under its prefix, and grants the locker's lease; blocks
     * at most for the connect timeout.
     *
     * @throws LockConfigurationException if the URI or an option is malformed
     * @throws LockBackendException if etcd did not grant a lease within the connect timeout, or refused the locker
     *     (TLS handshake, authentication, permission on the prefix), naming the cause
     */
    @Override
    public LockBackend open(BackendConfig config) {
        EtcdConnection connection = EtcdConnection.read(config);
        return open(
                config,
                connection.location(),
                Optional.of(connection),
                connectTimeout -> connection.build(connectTimeout, adjustClient),
                true);
    }

    /**
     * Opens a backend on {@code location} with the lock options of {@code config}, on the client {@code connect} gives
     * for the connect timeout: one made from {@code connection} (closed with the backend, {@code ownsClient}), or the
     * application's ({@link ApplicationClientProvider}, no connection).
     *
     * @throws LockConfigurationException if an option is malformed or unknown
     * @throws LockBackendException as {@link #open(BackendConfig)}
     */
    static LockBackend open(
            BackendConfig config,
            EtcdLocation location,
            Optional<EtcdConnection> connection,
            Function<Duration, Client> connect,
            boolean ownsClient) {
        EtcdLockMode mode = config.option(MODE).map(EtcdLockMode::parse).orElse(EtcdLockMode.FAIR);
        Duration connectTimeout = config.connectTimeout();
        Duration operationTimeout = config.durationOption(OPERATION_TIMEOUT, connectTimeout);
        long ttlSeconds = ttlSeconds(config.leaseTime());
        long delaySeconds = delaySeconds(config.lockDelay(), ttlSeconds);
        config.rejectUnknownOptions(NAME);

        Client client = connect.apply(connectTimeout);
        int n = BACKENDS.incrementAndGet();
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-etcd-" + n);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        EtcdCalls calls = new EtcdCalls(client, location.describeEndpoints(), config.ticker(), timer);
        Sessions sessions = new Sessions(calls, ttlSeconds, delaySeconds, operationTimeout);
        // TLS spoken to a plaintext member or the reverse: found on the first unanswered connection, not waited out.
        Optional<ProtocolProbe> probe = connection.map(
                c -> new ProtocolProbe(c.location(), c.tls().isPresent(), min(connectTimeout, PROBE_TIMEOUT)));
        // A tenth of the time, at most 500 ms, is kept for asking the members why, if no session comes; not on an
        // application's client, whose endpoints distlock does not know.
        long statusMillis =
                connection.isPresent() ? Math.min(MemberStatus.BUDGET_MILLIS, connectTimeout.toMillis() / 10) : 0;
        try {
            Deadline deadline = Deadline.after(connectTimeout.minusMillis(statusMillis), config.ticker());
            // Before the lease: a locker that may not write its keys leaves nothing in etcd.
            calls.checkWritable(
                            location.prefix() + "/",
                            deadline,
                            failure -> probe.isPresent() && probe.get().mismatched(failure))
                    .get();
            sessions.grant(deadline).get();
            return new EtcdLockBackend(
                    client, ownsClient, location, mode, operationTimeout, connectTimeout, calls, sessions, timer);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close(client, ownsClient, timer);
            throw new LockBackendException("Interrupted while connecting to etcd at " + location.describe(), e);
        } catch (ExecutionException | RuntimeException e) {
            Throwable cause = EtcdCalls.unwrap(e);
            Optional<String> noLeader = statusMillis > 0 && !EtcdCalls.isEtcdsError(cause)
                    ? MemberStatus.noLeader(client, location, statusMillis)
                    : Optional.empty();
            close(client, ownsClient, timer);
            Optional<String> mismatch = probe.flatMap(ProtocolProbe::found);
            if (mismatch.isPresent()) {
                throw new LockBackendException(
                        "Could not open a session with etcd at " + location.describeEndpoints() + ": " + mismatch.get(),
                        cause);
            }
            if (EtcdFailures.isOutOfSpace(cause)) { // an answer, at once: not a wait for connectTimeout
                throw new LockBackendException(
                        "Could not open a session with etcd at " + location.describeEndpoints() + ": "
                                + EtcdFailures.OUT_OF_SPACE,
                        cause);
            }
            throw new LockBackendException(
                    "Could not open a session with etcd at " + location.describeEndpoints() + " within "
                            + DurationText.of(connectTimeout) + " (option connectTimeout): "
                            + noLeader.orElseGet(() ->
                                    EtcdFailures.describe(cause, location, connection.flatMap(EtcdConnection::user))),
                    cause);
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static void close(Client client, boolean ownsClient, ScheduledThreadPoolExecutor timer) {
        try {
            if (ownsClient) {
                client.close();
            }
        } finally {
            timer.shutdownNow();
        }
    }

    /** etcd lease TTLs are whole seconds: the lease time rounded up, at least 1. */
    static long ttlSeconds(Duration leaseTime) {
        long millis = leaseTime.toMillis();
        long seconds = (millis + 999) / 1000;
        if (seconds > Integer.MAX_VALUE) {
            throw new LockConfigurationException("Option 'ttl' is too long for an etcd lease: "
                    + DurationText.of(leaseTime) + " (at most " + Integer.MAX_VALUE + " seconds)");
        }
        return Math.max(1, seconds);
    }

    /**
     * The lock-delay in the whole seconds an etcd lease counts: rounded up (0 for none), so that a key outlives its
     * holder's validity by at least the delay; the lease's TTL, {@code ttlSeconds} plus this, must fit etcd's.
     */
    static long delaySeconds(Duration lockDelay, long ttlSeconds) {
        long seconds = lockDelay.getSeconds() + (lockDelay.getNano() > 0 ? 1 : 0);
        if (ttlSeconds + seconds > Integer.MAX_VALUE) {
            throw new LockConfigurationException("Option 'lockDelay' is too long for an etcd lease: "
                    + DurationText.of(lockDelay) + " plus the lease's " + ttlSeconds + " s is more than "
                    + Integer.MAX_VALUE + " seconds");
        }
        return seconds;
    }
}
