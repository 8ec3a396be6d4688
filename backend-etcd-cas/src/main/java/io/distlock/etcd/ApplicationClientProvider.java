package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.etcd.jetcd.Client;
import java.util.Optional;
import java.util.Set;

/**
 * The etcd backend on the application's own jetcd {@link Client} ({@link EtcdLockers#using}): the client's endpoints,
 * TLS, credentials and interceptors. The lock options apply as usual; the connection options do not (the client
 * already has them) and are refused. Closing the backend revokes its lease and closes its watches, never the client.
 */
final class ApplicationClientProvider implements LockBackendProvider {

    /** The URI backend's name and schemes: a locker on the application's client is the same backend. */
    private static final LockBackendProvider BY_URI = new EtcdLockBackendProvider();

    private final Client client;

    ApplicationClientProvider(Client client) {
        this.client = client;
    }

    @Override
    public String name() {
        return BY_URI.name();
    }

    @Override
    public Set<String> uriSchemes() {
        return BY_URI.uriSchemes();
    }

    /**
     * Checks that the locker may write under its prefix and grants the locker's lease on the application's client;
     * blocks at most for the connect timeout.
     *
     * @throws LockConfigurationException if a connection option is given, or the prefix or a lock option is malformed
     * @throws LockBackendException if etcd did not grant a lease within the connect timeout, or refused the locker
     */
    @Override
    public LockBackend open(BackendConfig config) {
        EtcdConnection.refuseOptions(config);
        EtcdLocation location = EtcdLocation.ofPrefix(config.uri());
        return EtcdLockBackendProvider.open(config, location, Optional.empty(), connectTimeout -> client, false);
    }
}
