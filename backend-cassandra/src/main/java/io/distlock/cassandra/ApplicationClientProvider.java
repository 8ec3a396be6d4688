package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.Set;

/**
 * The Cassandra backend on an application's session ({@link CassandraLockers#using}): reads the lock options as the
 * URI provider does, refuses the connection's, and never closes the session.
 */
final class ApplicationClientProvider implements LockBackendProvider {

    private final CqlSession session;

    ApplicationClientProvider(CqlSession session) {
        this.session = session;
    }

    @Override
    public String name() {
        return "cassandra";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("cassandra");
    }

    /**
     * Opens the backend on the session.
     *
     * @throws LockConfigurationException if a connection option is given, or the session has been closed
     */
    @Override
    public LockBackend open(BackendConfig config) {
        CassandraClientSettings.rejectOn(config);
        CassandraSettings settings = CassandraSettings.read(
                config, CassandraLocation.onSession(config.uri(), CassandraLockers.describe(session)));
        config.rejectUnknownOptions(name());
        if (session.isClosed()) {
            throw new LockConfigurationException("The CqlSession given to CassandraLockers.using is closed");
        }
        return CassandraLockBackendProvider.openOn(session, false, settings, config);
    }

    @Override
    public String toString() {
        return "ApplicationClientProvider[" + session.getName() + "]";
    }
}
