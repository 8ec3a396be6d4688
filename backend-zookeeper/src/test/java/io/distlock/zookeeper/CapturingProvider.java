package io.distlock.zookeeper;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.Set;

/**
 * The real provider, remembering the backend it opened and the configuration it opened it with, so a test can reach
 * that backend's ZooKeeper session and the options it was given.
 */
final class CapturingProvider implements LockBackendProvider {

    private final ZooKeeperLockBackendProvider real = new ZooKeeperLockBackendProvider();
    private volatile ZooKeeperLockBackend opened;
    private volatile BackendConfig config;

    @Override
    public String name() {
        return real.name();
    }

    @Override
    public Set<String> uriSchemes() {
        return real.uriSchemes();
    }

    @Override
    public LockBackend open(BackendConfig config) {
        this.config = config;
        ZooKeeperLockBackend backend = (ZooKeeperLockBackend) real.open(config);
        opened = backend;
        return backend;
    }

    ZooKeeperLockBackend opened() {
        return opened;
    }

    /** The configuration of the last opening. */
    BackendConfig config() {
        return config;
    }
}
