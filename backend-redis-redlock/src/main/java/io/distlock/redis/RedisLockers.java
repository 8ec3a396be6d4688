package io.distlock.redis;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Lockers on the Lettuce clients the application already configured, with their TLS, credentials, options and
 * resources, instead of a URI:
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create(RedisURI.create("rediss://redis.example.com:6380")); // the application's
 * try (RemoteLocker locker = RedisLockers.using(client).leaseTime(Duration.ofSeconds(10)).build()) {
 *     ...
 * }
 * // client is still open here
 * }</pre>
 *
 * <p>Each returns a {@link RemoteLockerBuilder}, so lease time, connect timeout, listener executor, observer and the
 * lock options ({@code instanceTimeout}, {@code keyPrefix}, ...) still apply; the connection options ({@code user},
 * {@code password}, {@code database}, TLS) are refused, since the client has its own. The locker opens its own
 * connections through the client (a command connection and a pub/sub connection per master) and closes them when it
 * closes; it never closes or reconfigures the client. The client's {@code ClientOptions} apply as they are: distlock's
 * own clients reject commands while disconnected ({@code DisconnectedBehavior.REJECT_COMMANDS}), which a client
 * given here may not do (a lock attempt then waits out its per-instance timeout instead of failing at once).
 */
public final class RedisLockers {

    private RedisLockers() {}

    /**
     * A locker on one Redis instance: the default {@link RedisURI} of {@code client} (a client made by {@link
     * RedisClient#create(RedisURI)} or {@link RedisClient#create(String)}).
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static RemoteLockerBuilder using(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return builder(
                "redis://application-client",
                List.of(new ApplicationClientProvider.Target("the client's default URI", connector(client, null))));
    }

    /**
     * A locker on the Redis instance at {@code uri}, reached through {@code client} (for a client made without a
     * default URI, or to lock on another instance than its default). A Redis Sentinel URI ({@code
     * RedisURI.Builder.sentinel(host, port, "mymaster")}) names the master the sentinels watch, asked of a sentinel at
     * every connection, as {@code redis-sentinel://} does.
     *
     * @throws NullPointerException if an argument is null
     */
    public static RemoteLockerBuilder using(RedisClient client, RedisURI uri) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(uri, "uri");
        String target = isSentinel(uri)
                ? RedisLocation.SENTINEL_SCHEME + "://" + sentinels(uri) + "/" + uriSafe(uri.getSentinelMasterId())
                : "redis://" + name(uri);
        return builder(target, List.of(target(client, uri)));
    }

    /**
     * A Redlock locker over independent masters, one client each, at each client's default {@link RedisURI}.
     *
     * @throws LockConfigurationException if the number of masters is even, or a client is given twice
     * @throws NullPointerException if {@code masters} or a client is null
     */
    public static RemoteLockerBuilder redlock(List<RedisClient> masters) {
        List<RedisClient> clients = List.copyOf(masters);
        checkOdd(clients.size());
        Set<RedisClient> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<ApplicationClientProvider.Target> targets = new ArrayList<>();
        for (RedisClient c : clients) {
            if (!seen.add(c)) {
                throw new LockConfigurationException("Redlock masters: the same RedisClient is given twice; Redlock's"
                        + " majority counts independent masters, one client each");
            }
            targets.add(new ApplicationClientProvider.Target(
                    "master " + (targets.size() + 1) + " (the client's default URI)", connector(c, null)));
        }
        return builder("redlock://" + hostless(clients.size()), targets);
    }

    /**
     * A Redlock locker over the independent masters at {@code masters}, all reached through {@code client}.
     *
     * @throws LockConfigurationException if the number of masters is even, or a master is given twice
     * @throws NullPointerException if an argument or a URI is null
     */
    public static RemoteLockerBuilder redlock(RedisClient client, List<RedisURI> masters) {
        Objects.requireNonNull(client, "client");
        List<RedisURI> uris = List.copyOf(masters);
        checkOdd(uris.size());
        List<ApplicationClientProvider.Target> targets = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<String> hosts = new ArrayList<>();
        for (RedisURI uri : uris) {
            String name = name(uri);
            if (names.contains(name)) {
                throw new LockConfigurationException("Redlock masters: " + name + " is given twice; Redlock's majority"
                        + " counts independent masters");
            }
            names.add(name);
            hosts.add(isSentinel(uri) ? "sentinel-master-" + uriSafe(uri.getSentinelMasterId()) : name);
            targets.add(target(client, uri));
        }
        return builder("redlock://" + String.join(",", hosts), targets);
    }

    private static RemoteLockerBuilder builder(String target, List<ApplicationClientProvider.Target> masters) {
        return RemoteLockers.builder().uri(target).provider(new ApplicationClientProvider(target, masters));
    }

    private static ApplicationClientProvider.Target target(RedisClient client, RedisURI uri) {
        return new ApplicationClientProvider.Target(name(uri), connector(client, uri));
    }

    private static ApplicationClient connector(RedisClient client, RedisURI uri) {
        return new ApplicationClient(client, Optional.ofNullable(uri));
    }

    /**
     * {@code host:port} of a URI, without its credentials; a Unix socket by its path; a master found through Redis
     * Sentinel by its name and the sentinels.
     */
    private static String name(RedisURI uri) {
        if (isSentinel(uri)) {
            return "master '" + uri.getSentinelMasterId() + "' of sentinels " + sentinels(uri);
        }
        if (uri.getHost() != null) {
            return uri.getHost() + ":" + uri.getPort();
        }
        return Objects.requireNonNullElse(uri.getSocket(), "application-client");
    }

    private static boolean isSentinel(RedisURI uri) {
        return uri.getSentinelMasterId() != null && !uri.getSentinels().isEmpty();
    }

    private static String sentinels(RedisURI uri) {
        return uri.getSentinels().stream()
                .map(s -> s.getHost() + ":" + s.getPort())
                .collect(Collectors.joining(","));
    }

    /** A master's name as it may stand in the locker's URI: its letters, digits, '.', '_' and '-', '_' for others. */
    private static String uriSafe(String name) {
        return name.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    /** Host names for the locker's URI when the clients do not say theirs. */
    private static String hostless(int n) {
        List<String> hosts = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            hosts.add("application-client-" + i);
        }
        return String.join(",", hosts);
    }

    private static void checkOdd(int n) {
        if (n == 0 || n % 2 == 0) {
            throw new LockConfigurationException("Redlock needs an odd number of masters, got " + n
                    + ": a majority of an even number survives no more failures than one master fewer");
        }
    }
}
