package io.distlock.etcd;

import io.distlock.LockConfigurationException;
import io.distlock.spi.HostList;
import java.net.URI;
import java.util.List;

/**
 * Where the locks live: the cluster's client endpoints and the key prefix, parsed from {@code
 * etcd://host[:port][,host[:port]...][/prefix]} (read by {@link HostList}). A host without a port gets {@value #DEFAULT_PORT}; a URI without a path
 * gets the prefix {@value #DEFAULT_PREFIX}. The prefix is used as given (leading {@code /} included, a trailing one
 * dropped), so {@code etcd://h:2379/locks} puts the lock {@code a} at {@code /locks/a}.
 *
 * @param endpoints client URLs, e.g. {@code http://127.0.0.1:2379}
 * @param prefix the key prefix, without a trailing slash
 */
record EtcdLocation(List<String> endpoints, String prefix) {

    static final int DEFAULT_PORT = 2379;
    static final String DEFAULT_PREFIX = "/distlock";

    private static final String EXPECTED = "expected etcd://host:port[,host:port...][/prefix], e.g. "
            + "etcd://127.0.0.1:2379/locks or etcd://e1:2379,e2:2379,e3:2379/locks";

    static EtcdLocation parse(URI uri) {
        if (!"etcd".equalsIgnoreCase(uri.getScheme())) {
            throw new LockConfigurationException(
                    "Not an etcd URI: '" + uri + "' (scheme '" + uri.getScheme() + "'); " + EXPECTED);
        }
        List<String> endpoints = HostList.parse(uri, "etcd", DEFAULT_PORT, EXPECTED).addresses().stream()
                .map(address -> "http://" + address)
                .toList();
        return new EtcdLocation(endpoints, prefix(uri));
    }

    /** The endpoints joined by commas, for messages. */
    String describe() {
        return String.join(",", endpoints) + prefix;
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
