package io.distlock.redis;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.HostList;
import io.distlock.toolkit.TlsSettings;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Redis backend: Redlock (seed 002) with Lettuce, over {@code redis://host:port} or {@code rediss://host:port}
 * (one instance, plaintext or TLS: the seed's "correct implementation with a single instance") or {@code
 * redlock://h1:p1,h2:p2,...} (N independent masters, typically 5; N must be odd; TLS with {@code tls=true}), or
 * {@code redis-sentinel://s1:p1,s2:p2,.../name} (one master, the one the sentinels watch under {@code name}: asked of
 * a sentinel at every connection, so that after a failover the locker reaches the promoted replica; port 26379 when
 * omitted, TLS with {@code tls=true}). Port 6379 when omitted.
 *
 * <h2>Options</h2>
 * Query parameters, {@link io.distlock.RemoteLockerBuilder#option}, or typed through {@link RedisLockOptions}:
 *
 * <ul>
 *   <li>{@code ttl} (common, default 30s): the keys' time to live, renewed by the locker every third of it.
 *   <li>{@value #INSTANCE_TIMEOUT} (default 100ms, or ttl/10 if that is shorter): how long one master may take to
 *       answer an acquisition before it counts as a "no"; small against the ttl so that a dead or frozen master costs
 *       little (a granted attempt does not wait for it at all). The ttl must be at least 10 times it.
 *   <li>{@value #RETRY_COUNT} (default 3) and {@value #RETRY_DELAY} (default 10ms): after a split vote or unanswered
 *       masters, {@code tryLock} tries again up to this many times, each after a random delay of at most this long,
 *       doubled each time; a waiting {@code lock} retries after a split after such a delay, doubling after splits in
 *       a row up to the poll interval; a waiter woken by a release attempts after a random delay of at most this
 *       long (seed 002's desynchronisation of clients that heard the same release).
 *   <li>{@value #POLL_INTERVAL} (default ttl/4, at most 500ms): the longest a waiter sleeps without a release message
 *       (a lost message, a holder that died) before it tries again.
 *   <li>{@value #COURTESY} (default 2ms on one master; on several, 2ms + {@code retryDelay}): a locker that
 *       releases a key it had to wait for, and asks for it again at once, waits this long before its attempt, so
 *       that the waiters the release woke get the key first (a woken waiter needs a message and a round trip; the
 *       releaser would otherwise win most races), or until its turn comes round: until every other locker seen
 *       releasing the key lately has released it once since. It costs the releaser nothing while another holds the
 *       key, and at most this long when nobody took it; an uncontended locker never pauses. {@code 0} turns it off:
 *       more hand-offs stay in the releasing process, which lowers fairness.
 *   <li>{@code connectTimeout} (common): also how long a wait goes on while too few masters answer; it then fails
 *       with a {@link LockBackendException} naming them, deadline or not.
 *   <li>{@value #CLOCK_DRIFT_FACTOR} (default 0.01): the drift allowance is ttl x factor + 2 ms.
 *   <li>{@value #KEY_PREFIX} (default {@code distlock:}): prepended to every key; the release channel is {@code
 *       <prefix>released}.
 *   <li>{@value #USER} and {@value #PASSWORD} (or {@code passwordFile}, {@code passwordEnv}): {@code AUTH user
 *       password} (an ACL user, Redis 6+) or, without a user, {@code AUTH password}, on every connection, pub/sub
 *       included. A password never shows in a message, a log line or a {@code toString}.
 *   <li>{@value #DATABASE} (default 0): {@code SELECT} on every master.
 *   <li>TLS ({@link TlsSettings}): {@code rediss://host:port} for one instance, {@code tls=true} for either scheme
 *       (the only form for {@code redlock://}); {@code caFile} (PEM authorities to trust, default the JVM's trust
 *       store), {@code certFile} + {@code keyFile} (PEM client certificate and PKCS#8 key, for servers started with
 *       {@code tls-auth-clients}), {@code verifyHost} (default true). Handed to Lettuce's {@code SslOptions}.
 * </ul>
 *
 * <p>A locker on clients the application already configured is made by {@link RedisLockers}.
 *
 * <h2>Guarantees</h2>
 * Mutual exclusion for as long as a holder's validity lasts, under seed 002's assumptions: clocks that run at about
 * the same rate (within the drift factor), masters that do not lose keys (AOF with {@code appendfsync always}, or a
 * crashed master kept down for longer than the largest ttl before it rejoins). No fencing tokens: a holder that pauses
 * past its validity (GC, SIGSTOP, a clock jump) cannot be stopped from writing after the next holder (Kleppmann's
 * critique of Redlock); use a store with fencing where correctness depends on it. Not FIFO. A release wakes one
 * waiter of the key per locker, by a message it publishes. Theorem 4 (of simultaneous {@code tryLock}s one wins)
 * holds only with high probability: contenders can split the masters on every retry. Renewal has no limit on the
 * number of extensions (seed 002 has one): the lock is kept while its holder renews.
 *
 * <p>Opening connects to every master in parallel and needs a majority within {@code connectTimeout}; the others
 * are reconnected in the background. Each connected master is asked to run the release script on a key of the prefix
 * that nobody holds (which changes nothing), so that a wrong password, an ACL user without permission on the prefix
 * or a certificate the client does not trust fails opening, with that reason, rather than the first lock. Bad URIs or
 * options throw {@link LockConfigurationException}: an even number of masters, the same master twice, a ttl shorter
 * than 10 per-instance timeouts, a missing key file.
 */
public final class RedisLockBackendProvider implements LockBackendProvider {

    /** Option: how long one master may take to answer an acquisition; default 100ms, or ttl/10 if shorter. */
    public static final String INSTANCE_TIMEOUT = "instanceTimeout";
    /** Option: extra attempts of {@code tryLock} after a split vote; default 3. */
    public static final String RETRY_COUNT = "retryCount";
    /** Option: the bound of the random delay before a retry; default 10ms. */
    public static final String RETRY_DELAY = "retryDelay";
    /** Option: the longest a waiter sleeps without a release message; default ttl/4, at most 500ms. */
    public static final String POLL_INTERVAL = "pollInterval";
    /**
     * Option: how long a locker that released a contended key waits before asking for it again; default 2ms on one
     * master, 2ms + {@code retryDelay} on several; {@code 0} turns it off.
     */
    public static final String COURTESY = "courtesy";
    /** Option: the clock drift allowed per unit of ttl; default 0.01. */
    public static final String CLOCK_DRIFT_FACTOR = "clockDriftFactor";
    /** Option: the prefix of every key in Redis; default {@code distlock:}. */
    public static final String KEY_PREFIX = "keyPrefix";
    /** Option: the ACL user of every master (Redis 6+); default, the default user. */
    public static final String USER = "user";
    /**
     * Option: the password of every master, for the ACL user or the default user; also {@code passwordFile} (the
     * first line of a file) or {@code passwordEnv} (an environment variable), so that a URI carries none.
     */
    public static final String PASSWORD = "password";
    /** Option: the database number on every master; default 0. */
    public static final String DATABASE = "database";
    /** Option: the sentinels' ACL user ({@code redis-sentinel://} only); default, their default user. */
    public static final String SENTINEL_USER = "sentinelUser";
    /**
     * Option: the sentinels' password ({@code redis-sentinel://} only, for sentinels started with {@code requirepass}
     * or ACL users); also {@code sentinelPasswordFile} or {@code sentinelPasswordEnv}. The master's is {@code password}.
     */
    public static final String SENTINEL_PASSWORD = "sentinelPassword";

    /** The key, under the prefix, on which opening checks that we may run the scripts; nobody holds it. */
    static final String ACCESS_CHECK_KEY = "distlock-access-check";

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public RedisLockBackendProvider() {}

    /** {@code redis}. */
    @Override
    public String name() {
        return "redis";
    }

    /**
     * {@code redis} and {@code rediss} (one instance, plaintext and TLS), {@code redis-sentinel} (one master found
     * through Redis Sentinel) and {@code redlock} (N masters).
     */
    @Override
    public Set<String> uriSchemes() {
        return Set.of("redis", "rediss", RedisLocation.SENTINEL_SCHEME, "redlock");
    }

    /**
     * Connects to every master at once; blocks until a majority is connected, at most for the connect timeout.
     *
     * @throws LockConfigurationException if the URI or an option is malformed (before connecting)
     * @throws LockBackendException if fewer than a majority of the masters could be reached in time, or they refused
     *     us (authentication failed, permission denied on the key prefix, certificate not trusted)
     */
    @Override
    public LockBackend open(BackendConfig config) {
        RedisLocation location = RedisLocation.parse(config.uri());
        RedlockSettings settings = RedlockSettings.read(config);
        ConnectionSettings connection = ConnectionSettings.read(
                config, location.tls(), location.sentinelMaster().isPresent());
        config.rejectUnknownOptions(name());

        OwnResources resources = new OwnResources();
        ClientOptions options = connection.clientOptions(settings.connectTimeout());
        List<Master> masters = new ArrayList<>();
        LongAdder requests = new LongAdder();
        try {
            if (location.sentinelMaster().isPresent()) {
                String name = location.sentinelMaster().get();
                RedisURI uri = connection.sentinelUri(location.masters(), name, settings.connectTimeout());
                masters.add(new Master(
                        "master '" + name + "' of sentinels " + new HostList(location.masters()),
                        new OwnClient(uri, options, resources.lettuce()),
                        settings,
                        requests));
            } else {
                for (HostList.Address e : location.masters()) {
                    Connector connector = new OwnClient(
                            connection.redisUri(e, settings.connectTimeout()), options, resources.lettuce());
                    masters.add(new Master(e.toString(), connector, settings, requests));
                }
            }
        } catch (RuntimeException e) {
            masters.forEach(Master::close);
            resources.close();
            throw e;
        }
        return open(location.toString(), location.majority(), settings, config, masters, requests, resources::close);
    }

    /**
     * Connects to {@code masters} and checks each, needing a majority within the connect timeout; closes them and
     * {@code closeResources} if that fails.
     */
    static LockBackend open(
            String target,
            int majority,
            RedlockSettings settings,
            BackendConfig config,
            List<Master> masters,
            LongAdder requests,
            Runnable closeResources) {
        try {
            connectMajority(target, majority, settings, masters);
            return new RedisLockBackend(
                    target, majority, settings, config.ticker(), config.clock(), masters, requests, closeResources);
        } catch (RuntimeException e) {
            masters.forEach(Master::close);
            closeResources.run();
            throw e;
        }
    }

    private static void connectMajority(String target, int majority, RedlockSettings settings, List<Master> masters) {
        String probeKey = settings.redisKey(ACCESS_CHECK_KEY);
        String probeValue = "access-check-" + UUID.randomUUID();
        List<CompletableFuture<?>> connects = new ArrayList<>();
        for (Master m : masters) {
            connects.add(m.connectAndCheck(settings.connectTimeout(), probeKey, probeValue));
        }
        long end = System.nanoTime() + settings.connectTimeout().toNanos();
        int connected = 0;
        for (CompletableFuture<?> c : connects) {
            try {
                c.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                connected++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockBackendException("Interrupted while connecting to " + target, e);
            } catch (ExecutionException | TimeoutException e) {
                // counted below; a master down at open is reconnected in the background
            }
        }
        if (connected >= majority) {
            return;
        }
        List<String> down = new ArrayList<>();
        List<String> refusals = new ArrayList<>();
        for (Master m : masters) {
            down.add(m + " (" + m.lastError() + ")");
            m.refusal().ifPresent(r -> refusals.add(m + ": " + r));
        }
        String counts = connected + " of " + masters.size() + " connected, " + majority + " needed";
        if (!refusals.isEmpty()) {
            throw new LockBackendException("Could not open " + target + ": the Redis server refused us; "
                    + String.join("; ", refusals) + " (" + counts + ")");
        }
        throw new LockBackendException("Could not connect to a majority of the Redis masters of " + target + " within "
                + DurationText.of(settings.connectTimeout()) + " (option connectTimeout): " + counts + "; "
                + String.join(", ", down)
                + ". Are the servers running and reachable from here?");
    }
}
