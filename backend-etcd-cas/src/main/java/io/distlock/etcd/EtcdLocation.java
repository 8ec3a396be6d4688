package io.distlock.etcd;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.HostList;
import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * Where the locks live: the cluster's client endpoints and the key prefix, parsed from {@code
 * etcd://host[:port][,host[:port]...][/prefix]} or its TLS form {@code etcd+https://...} (hosts read by {@link
 * HostList}). A host without a port gets {@value #DEFAULT_PORT}; a URI without a path gets the prefix {@value
 * #DEFAULT_PREFIX}. The prefix is used as given (leading {@code /} included, a trailing one dropped), so {@code
 * etcd://h:2379/locks} puts the lock {@code a} at {@code /locks/a}.
 *
 * @param endpoints client URLs, e.g. {@code http://127.0.0.1:2379}; empty for the application's own client, whose
 *     endpoints distlock does not know
 * @param prefix the key prefix, without a trailing slash
 */
record EtcdLocation(List<String> endpoints, String prefix) {

    static final int DEFAULT_PORT = 2379;
    static final String DEFAULT_PREFIX = "/distlock";
    static final String SCHEME = "etcd";
    static final String TLS_SCHEME = "etcd+https";

    private static final String EXPECTED =
            "expected etcd://host:port[,host:port...][/prefix] or etcd+https://..., e.g. "
                    + "etcd://127.0.0.1:2379/locks or etcd+https://e1:2379,e2:2379,e3:2379/locks";

    /** Parses a URI of either scheme; {@code tls} says whether the endpoints are {@code https} ones. */
    static EtcdLocation parse(URI uri, boolean tls) {
        if (!isEtcdScheme(uri)) {
            throw new LockConfigurationException(
                    "Not an etcd URI: '" + uri + "' (scheme '" + uri.getScheme() + "'); " + EXPECTED);
        }
        String scheme = tls ? "https://" : "http://";
        List<String> endpoints = HostList.parse(uri, "etcd", DEFAULT_PORT, EXPECTED).addresses().stream()
                .map(address -> scheme + address)
                .toList();
        return new EtcdLocation(endpoints, prefix(uri));
    }

    /** Parses a URI, its endpoints {@code https} ones for the scheme {@code etcd+https}. */
    static EtcdLocation parse(URI uri) {
        return parse(uri, isTlsScheme(uri));
    }

    /** The location of the application's own client: the prefix only, from the URI's path. */
    static EtcdLocation ofPrefix(URI uri) {
        return new EtcdLocation(List.of(), prefix(uri));
    }

    static boolean isTlsScheme(URI uri) {
        return TLS_SCHEME.equals(lower(uri.getScheme()));
    }

    private static boolean isEtcdScheme(URI uri) {
        String scheme = lower(uri.getScheme());
        return SCHEME.equals(scheme) || TLS_SCHEME.equals(scheme);
    }

    private static String lower(String scheme) {
        return scheme == null ? "" : scheme.toLowerCase(Locale.ROOT);
    }

    /** The endpoints joined by commas (or "the application's client"), for messages. */
    String describeEndpoints() {
        return endpoints.isEmpty() ? "the application's etcd client" : String.join(",", endpoints);
    }

    /** The endpoints and the prefix, for messages. */
    String describe() {
        return describeEndpoints() + (endpoints.isEmpty() ? " at " : "") + prefix;
    }

    private static String prefix(URI uri) {
        String path = uri.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            return DEFAULT_PREFIX;
        }
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        if (trimmed.contains("//") || trimmed.isEmpty()) {
            throw new LockConfigurationException(
                    "etcd URI '" + uri + "' has an empty segment in its prefix '" + path + "'; " + EXPECTED);
        }
        return trimmed;
    }
}
