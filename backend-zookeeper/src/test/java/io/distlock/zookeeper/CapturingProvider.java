package io.distlock.zookeeper;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.Set;

/** The real provider, remembering the backend it opened, so a test can reach that backend's ZooKeeper session. */
final class CapturingProvider implements LockBackendProvider {

    private final ZooKeeperLockBackendProvider real = new ZooKeeperLockBackendProvider();
    private volatile ZooKeeperLockBackend opened;

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
        ZooKeeperLockBackend backend = (ZooKeeperLockBackend) real.open(config);
        opened = backend;
        return backend;
    }

    ZooKeeperLockBackend opened() {
        return opened;
    }
}
