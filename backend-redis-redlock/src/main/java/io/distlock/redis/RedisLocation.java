package io.distlock.redis;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.HostList;
import io.distlock.toolkit.HostList.Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The masters named by a {@code redis://host:port}, {@code rediss://host:port} or {@code redlock://h1:p1,h2:p2,...}
 * URI, checked for what Redlock needs: an odd number of distinct masters; or the sentinels and the master's name of a
 * {@code redis-sentinel://s1:p1,s2:p2,.../name} URI: one master, which the sentinels name, and name anew after a
 * failover.
 *
 * @param masters the masters, or for {@code redis-sentinel} the sentinels
 * @param sentinelMaster the master's name for {@code redis-sentinel}; empty otherwise
 */
record RedisLocation(String scheme, List<Address> masters, Optional<String> sentinelMaster) {

    static final int DEFAULT_PORT = 6379;

    /** The port of a sentinel given without one. */
    static final int DEFAULT_SENTINEL_PORT = 26379;

    /** The scheme of one master found through Redis Sentinel. */
    static final String SENTINEL_SCHEME = "redis-sentinel";

    private static final String SENTINEL_EXPECTED = "expected redis-sentinel://host[:port][,host[:port]...]/master,"
            + " e.g. redis-sentinel://s1:26379,s2:26379,s3:26379/mymaster (the sentinels, and the name they watch the"
            + " master under)";

    /** Whether the scheme asks for TLS: {@code rediss}. */
    boolean tls() {
        return scheme.equals("rediss");
    }

    /** The number of masters that must agree: N/2+1 (1 behind sentinels). */
    int majority() {
        return sentinelMaster.isPresent() ? 1 : masters.size() / 2 + 1;
    }

    static RedisLocation parse(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (scheme.equals(SENTINEL_SCHEME)) {
            return parseSentinels(uri);
        }
        String path = uri.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            throw new LockConfigurationException("Redis URI '" + uri + "' has a path '" + path
                    + "'; choose the database with the option 'database' (e.g. ?database=2)");
        }
        String authority = uri.getRawAuthority(); // credentials before '@' were refused by the locker
        // Distinct masters are checked below, resolved names included, with Redlock's reason.
        List<Address> masters = HostList.parseAllowingDuplicates(uri, "Redis", DEFAULT_PORT, expected(scheme))
                .addresses();
        if (!scheme.equals("redlock") && masters.size() != 1) {
            throw new LockConfigurationException(
                    scheme + ":// takes one instance, '" + uri + "' names " + masters.size()
                            + "; for Redlock over independent masters use redlock://" + authority
                            + (scheme.equals("rediss") ? "?tls=true" : ""));
        }
        checkOdd(uri, masters.size());
        checkDistinct(uri, masters);
        return new RedisLocation(scheme, masters, Optional.empty());
    }

    /**
     * The sentinels of a {@code redis-sentinel} URI and the name of the master they watch, its path (in Lettuce's own
     * form, {@code redis-sentinel://host#master}, the path is a database: a fragment never reaches here, and the
     * database is option {@code database}).
     */
    private static RedisLocation parseSentinels(URI uri) {
        String path = uri.getPath() == null ? "" : uri.getPath();
        String name = path.startsWith("/") ? path.substring(1) : path;
        if (name.isBlank() || name.contains("/")) {
            throw new LockConfigurationException("Redis URI '" + uri + "' names "
                    + (name.isBlank() ? "no master" : "the master '" + name + "', which holds a '/'") + "; "
                    + SENTINEL_EXPECTED);
        }
        List<Address> sentinels = HostList.parse(uri, "Redis Sentinel", DEFAULT_SENTINEL_PORT, SENTINEL_EXPECTED)
                .addresses();
        return new RedisLocation(SENTINEL_SCHEME, sentinels, Optional.of(name));
    }

    private static void checkOdd(URI uri, int n) {
        if (n % 2 == 0) {
            throw new LockConfigurationException("Redlock needs an odd number of masters, '" + uri + "' names " + n
                    + ": a majority of " + n + " is " + (n / 2 + 1) + ", so " + n + " masters survive " + (n / 2 - 1)
                    + " failure(s), no more than " + (n - 1) + " do, with one more machine that can fail and slow"
                    + " every lock down; use " + (n - 1) + " or " + (n + 1) + " masters");
        }
    }

    private static void checkDistinct(URI uri, List<Address> masters) {
        Map<String, Address> seen = new HashMap<>();
        for (Address e : masters) {
            for (String id : identities(e)) {
                Address before = seen.putIfAbsent(id, e);
                if (before != null) {
                    throw new LockConfigurationException("Redis URI '" + uri + "' names the same master twice ("
                            + before + " and " + e + "): Redlock's majority counts independent masters, and one"
                            + " server counted twice would let a single failure decide the lock");
                }
            }
        }
    }

    /** The textual address and, when the host resolves, the numeric one (localhost:6379 = 127.0.0.1:6379). */
    private static List<String> identities(Address e) {
        List<String> ids = new ArrayList<>();
        ids.add(e.host().toLowerCase(Locale.ROOT) + ":" + e.port());
        try {
            ids.add(InetAddress.getByName(e.host()).getHostAddress() + ":" + e.port());
        } catch (UnknownHostException unresolved) {
            // reported when connecting
        }
        return ids.stream().distinct().toList();
    }

    private static String expected(String scheme) {
        return scheme.equals("redlock")
                ? "expected redlock://host[:port][,host[:port]...], e.g. redlock://h1:6379,h2:6379,h3:6379"
                : "expected " + scheme + "://host[:port], e.g. " + scheme + "://h:6379";
    }

    @Override
    public String toString() {
        return scheme + "://" + new HostList(masters)
                + sentinelMaster.map(name -> "/" + name).orElse("");
    }
}
