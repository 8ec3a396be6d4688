package io.distlock.etcd;

import io.distlock.LockConfigurationException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the locks live: the cluster's client endpoints and the key prefix, parsed from {@code
 * etcd://host:port[,host:port...][/prefix]}. A host without a port gets {@value #DEFAULT_PORT}; a URI without a path
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
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isBlank()) {
            throw new LockConfigurationException("etcd URI '" + uri + "' names no host; " + EXPECTED);
        }
        if (authority.contains("@")) {
            throw new LockConfigurationException(
                    "etcd URI '" + uri + "' has user information, which is not supported; " + EXPECTED);
        }
        List<String> endpoints = new ArrayList<>();
        for (String entry : authority.split(",", -1)) {
            endpoints.add("http://" + hostAndPort(entry.trim(), uri));
        }
        return new EtcdLocation(List.copyOf(endpoints), prefix(uri));
    }

    /** The endpoints joined by commas, for messages. */
    String describe() {
        return String.join(",", endpoints) + prefix;
    }

    private static String hostAndPort(String entry, URI uri) {
        if (entry.isEmpty()) {
            throw new LockConfigurationException(
                    "etcd URI '" + uri + "' has an empty host in its host list; " + EXPECTED);
        }
        String host;
        String port;
        if (entry.startsWith("[")) { // IPv6 literal: [::1]:2379
            int close = entry.indexOf(']');
            if (close < 0) {
                throw new LockConfigurationException(
                        "etcd URI '" + uri + "' has an unclosed IPv6 literal '" + entry + "'; " + EXPECTED);
            }
            host = entry.substring(0, close + 1);
            String rest = entry.substring(close + 1);
            if (!rest.isEmpty() && !rest.startsWith(":")) {
                throw new LockConfigurationException(
                        "etcd URI '" + uri + "' has a malformed host '" + entry + "'; " + EXPECTED);
            }
            port = rest.isEmpty() ? null : rest.substring(1);
        } else {
            int colon = entry.indexOf(':');
            host = colon < 0 ? entry : entry.substring(0, colon);
            port = colon < 0 ? null : entry.substring(colon + 1);
        }
        if (host.isEmpty() || !host.matches("[A-Za-z0-9._\\-\\[\\]:]+")) {
            throw new LockConfigurationException(
                    "etcd URI '" + uri + "' has a malformed host '" + entry + "'; " + EXPECTED);
        }
        return host + ":" + port(port, entry, uri);
    }

    private static int port(String raw, String entry, URI uri) {
        if (raw == null) {
            return DEFAULT_PORT;
        }
        try {
            int port = Integer.parseInt(raw);
            if (port >= 1 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new LockConfigurationException("etcd URI '" + uri + "' has a bad port '" + raw + "' in '" + entry
                + "': a port is a number from 1 to 65535; " + EXPECTED);
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
