package io.distlock.zookeeper;

import io.distlock.LockConfigurationException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.utils.PathUtils;

/**
 * Where the locks live: the ensemble's connect string and the base path, parsed from {@code
 * zk://host:port[,host:port...]/base/path}. A host without a port gets {@value #DEFAULT_PORT}; a URI without a path
 * gets {@value #DEFAULT_BASE_PATH}.
 */
record ZkLocation(String connectString, String basePath) {

    static final int DEFAULT_PORT = 2181;
    static final String DEFAULT_BASE_PATH = "/distlock";

    private static final String EXPECTED = "expected zk://host:port[,host:port...][/base/path], e.g. "
            + "zk://127.0.0.1:2181/locks or zk://zk1:2181,zk2:2181,zk3:2181/locks";

    static ZkLocation parse(URI uri) {
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isBlank()) {
            throw new LockConfigurationException("ZooKeeper URI '" + uri + "' names no host; " + EXPECTED);
        }
        if (authority.contains("@")) {
            throw new LockConfigurationException(
                    "ZooKeeper URI '" + uri + "' has user information, which is not supported; " + EXPECTED);
        }
        List<String> hosts = new ArrayList<>();
        for (String entry : authority.split(",", -1)) {
            hosts.add(hostAndPort(entry.trim(), uri));
        }
        return new ZkLocation(String.join(",", hosts), basePath(uri));
    }

    private static String hostAndPort(String entry, URI uri) {
        if (entry.isEmpty()) {
            throw new LockConfigurationException(
                    "ZooKeeper URI '" + uri + "' has an empty host in its host list; " + EXPECTED);
        }
        String host;
        String port;
        if (entry.startsWith("[")) { // IPv6 literal: [::1]:2181
            int close = entry.indexOf(']');
            if (close < 0) {
                throw new LockConfigurationException(
                        "ZooKeeper URI '" + uri + "' has an unclosed IPv6 literal '" + entry + "'; " + EXPECTED);
            }
            host = entry.substring(0, close + 1);
            String rest = entry.substring(close + 1);
            if (!rest.isEmpty() && !rest.startsWith(":")) {
                throw new LockConfigurationException(
                        "ZooKeeper URI '" + uri + "' has a malformed host '" + entry + "'; " + EXPECTED);
            }
            port = rest.isEmpty() ? null : rest.substring(1);
        } else {
            int colon = entry.indexOf(':');
            host = colon < 0 ? entry : entry.substring(0, colon);
            port = colon < 0 ? null : entry.substring(colon + 1);
        }
        if (host.isEmpty() || !host.matches("[A-Za-z0-9._\\-\\[\\]:]+")) {
            throw new LockConfigurationException(
                    "ZooKeeper URI '" + uri + "' has a malformed host '" + entry + "'; " + EXPECTED);
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
        throw new LockConfigurationException("ZooKeeper URI '" + uri + "' has a bad port '" + raw + "' in '" + entry
                + "': a port is a number from 1 to 65535; " + EXPECTED);
    }

    private static String basePath(URI uri) {
        String path = uri.getPath();
        if (path == null || path.isEmpty() || path.equals("/")) {
            return DEFAULT_BASE_PATH;
        }
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        if (trimmed.equals("/zookeeper") || trimmed.startsWith("/zookeeper/")) {
            throw new LockConfigurationException("ZooKeeper URI '" + uri + "' has the base path '" + path
                    + "', which is reserved by ZooKeeper itself; choose another, e.g. " + DEFAULT_BASE_PATH);
        }
        try {
            return PathUtils.validatePath(trimmed);
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(
                    "ZooKeeper URI '" + uri + "' has an invalid base path '" + path + "': " + e.getMessage(), e);
        }
    }
}
