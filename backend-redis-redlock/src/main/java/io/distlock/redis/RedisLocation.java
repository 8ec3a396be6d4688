package io.distlock.redis;

import io.distlock.LockConfigurationException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The masters named by a {@code redis://host:port} or {@code redlock://h1:p1,h2:p2,...} URI, checked for what
 * Redlock needs: an odd number of distinct masters.
 */
record RedisLocation(String scheme, List<Endpoint> masters) {

    static final int DEFAULT_PORT = 6379;

    /** One master's address. */
    record Endpoint(String host, int port) {
        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** The number of masters that must agree: N/2+1. */
    int majority() {
        return masters.size() / 2 + 1;
    }

    static RedisLocation parse(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        String text = uri.toString();
        int start = text.indexOf("://");
        if (start < 0) {
            throw new LockConfigurationException(
                    "Malformed Redis URI '" + uri + "': expected " + scheme + "://host:port" + example(scheme));
        }
        String rest = text.substring(start + 3);
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            if (slash != rest.length() - 1) {
                throw new LockConfigurationException("Redis URI '" + uri + "' has a path '" + rest.substring(slash)
                        + "'; choose the database with the option 'database' (e.g. ?database=2)");
            }
            rest = rest.substring(0, slash);
        }
        if (rest.contains("@")) {
            throw new LockConfigurationException(
                    "Redis URI '" + uri + "' carries credentials; give the password as the option 'password' instead");
        }
        if (rest.isBlank()) {
            throw new LockConfigurationException("Redis URI '" + uri + "' names no host" + example(scheme));
        }
        List<Endpoint> masters = new ArrayList<>();
        for (String part : rest.split(",", -1)) {
            masters.add(endpoint(uri, part.trim()));
        }
        if (scheme.equals("redis") && masters.size() != 1) {
            throw new LockConfigurationException("redis:// takes one instance, '" + uri + "' names " + masters.size()
                    + "; for Redlock over independent masters use redlock://" + rest);
        }
        checkOdd(uri, masters.size());
        checkDistinct(uri, masters);
        return new RedisLocation(scheme, List.copyOf(masters));
    }

    private static void checkOdd(URI uri, int n) {
        if (n % 2 == 0) {
            throw new LockConfigurationException("Redlock needs an odd number of masters, '" + uri + "' names " + n
                    + ": a majority of " + n + " is " + (n / 2 + 1) + ", so " + n + " masters survive " + (n / 2 - 1)
                    + " failure(s), no more than " + (n - 1) + " do, with one more machine that can fail and slow"
                    + " every lock down; use " + (n - 1) + " or " + (n + 1) + " masters");
        }
    }

    private static void checkDistinct(URI uri, List<Endpoint> masters) {
        Map<String, Endpoint> seen = new HashMap<>();
        for (Endpoint e : masters) {
            for (String id : identities(e)) {
                Endpoint before = seen.putIfAbsent(id, e);
                if (before != null) {
                    throw new LockConfigurationException("Redis URI '" + uri + "' names the same master twice ("
                            + before + " and " + e + "): Redlock's majority counts independent masters, and one"
                            + " server counted twice would let a single failure decide the lock");
                }
            }
        }
    }

    /** The textual address and, when the host resolves, the numeric one (localhost:6379 = 127.0.0.1:6379). */
    private static List<String> identities(Endpoint e) {
        List<String> ids = new ArrayList<>();
        ids.add(e.host().toLowerCase(Locale.ROOT) + ":" + e.port());
        try {
            ids.add(InetAddress.getByName(e.host()).getHostAddress() + ":" + e.port());
        } catch (UnknownHostException unresolved) {
            // reported when connecting
        }
        return ids.stream().distinct().toList();
    }

    private static Endpoint endpoint(URI uri, String part) {
        if (part.isEmpty()) {
            throw new LockConfigurationException("Redis URI '" + uri + "' has an empty host in its list");
        }
        String host;
        String port = null;
        if (part.startsWith("[")) {
            int close = part.indexOf(']');
            if (close < 0) {
                throw new LockConfigurationException("Redis URI '" + uri + "': unclosed '[' in '" + part + "'");
            }
            host = part.substring(1, close);
            String after = part.substring(close + 1);
            if (after.startsWith(":")) {
                port = after.substring(1);
            } else if (!after.isEmpty()) {
                throw new LockConfigurationException("Redis URI '" + uri + "': malformed address '" + part + "'");
            }
        } else {
            int colon = part.lastIndexOf(':');
            host = colon < 0 ? part : part.substring(0, colon);
            port = colon < 0 ? null : part.substring(colon + 1);
        }
        if (host.isBlank()) {
            throw new LockConfigurationException("Redis URI '" + uri + "': no host in '" + part + "'");
        }
        return new Endpoint(host, port == null ? DEFAULT_PORT : port(uri, part, port));
    }

    private static int port(URI uri, String part, String port) {
        try {
            int p = Integer.parseInt(port);
            if (p < 1 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new LockConfigurationException(
                    "Redis URI '" + uri + "': port of '" + part + "' must be 1..65535, got '" + port + "'");
        }
    }

    private static String example(String scheme) {
        return scheme.equals("redlock") ? " (e.g. redlock://h1:6379,h2:6379,h3:6379)" : " (e.g. redis://h:6379)";
    }

    @Override
    public String toString() {
        return scheme + "://"
                + String.join(",", masters.stream().map(Endpoint::toString).toList());
    }
}
