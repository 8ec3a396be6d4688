package io.distlock.zookeeper;

import io.distlock.LockConfigurationException;
import io.distlock.toolkit.HostList;
import java.net.URI;
import org.apache.curator.utils.PathUtils;

/**
 * Where the locks live: the ensemble's connect string and the base path, parsed from {@code
 * zk://host[:port][,host[:port]...]/base/path} (read by {@link HostList}). A host without a port gets {@value #DEFAULT_PORT}; a URI without a path
 * gets {@value #DEFAULT_BASE_PATH}.
 */
record ZkLocation(String connectString, String basePath) {

    static final int DEFAULT_PORT = 2181;
    static final String DEFAULT_BASE_PATH = "/distlock";

    private static final String EXPECTED = "expected zk://host:port[,host:port...][/base/path], e.g. "
            + "zk://127.0.0.1:2181/locks or zk://zk1:2181,zk2:2181,zk3:2181/locks";

    static ZkLocation parse(URI uri) {
        return new ZkLocation(hosts(uri).toString(), basePath(uri.getPath(), "ZooKeeper URI '" + uri + "'"));
    }

    /** The hosts of {@code uri}, as {@link #parse} reads them. */
    static HostList hosts(URI uri) {
        return HostList.parse(uri, "ZooKeeper", DEFAULT_PORT, EXPECTED);
    }

    /**
     * The hosts of an application's client ({@code connectString}, any chroot dropped) and {@code basePath}.
     *
     * @throws LockConfigurationException if the base path is invalid or ZooKeeper's own
     */
    static ZkLocation ofClient(String connectString, String basePath) {
        String hosts = connectString == null ? "" : connectString;
        int chroot = hosts.indexOf('/');
        return new ZkLocation(
                chroot >= 0 ? hosts.substring(0, chroot) : hosts, basePath(basePath, "ZooKeeperLockers.using"));
    }

    private static String basePath(String path, String source) {
        if (path == null || path.isEmpty() || path.equals("/")) {
            return DEFAULT_BASE_PATH;
        }
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        if (trimmed.equals("/zookeeper") || trimmed.startsWith("/zookeeper/")) {
            throw new LockConfigurationException(source + ": the base path '" + path
                    + "' is reserved by ZooKeeper itself; choose another, e.g. " + DEFAULT_BASE_PATH);
        }
        try {
            return PathUtils.validatePath(trimmed);
        } catch (IllegalArgumentException e) {
            throw new LockConfigurationException(source + ": invalid base path '" + path + "': " + e.getMessage(), e);
        }
    }
}
