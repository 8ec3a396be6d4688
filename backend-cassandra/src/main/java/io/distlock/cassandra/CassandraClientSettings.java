package io.distlock.cassandra;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Secret;
import io.distlock.toolkit.TlsSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How the backend's own driver session reaches the cluster: the local data center, the role and its password, TLS, and
 * the driver's own configuration file. Read only when distlock makes the session; a session the application gives
 * ({@link CassandraLockers}) already has all of them.
 */
record CassandraClientSettings(
        Optional<String> localDatacenter,
        Optional<String> user,
        Optional<Secret> password,
        Optional<TlsSettings> tls,
        Optional<Path> driverConfig) {

    /** The options read here: refused on an application's session, which already has what they set. */
    static final List<String> OPTIONS = List.of(
            CassandraLockOptions.LOCAL_DATACENTER,
            CassandraLockOptions.USER,
            CassandraLockOptions.PASSWORD,
            CassandraLockOptions.PASSWORD + "File",
            CassandraLockOptions.PASSWORD + "Env",
            TlsSettings.TLS,
            TlsSettings.CA_FILE,
            TlsSettings.CERT_FILE,
            TlsSettings.KEY_FILE,
            TlsSettings.VERIFY_HOST,
            CassandraLockOptions.DRIVER_CONFIG);

    /**
     * Reads the connection's options.
     *
     * @throws LockConfigurationException if one is malformed, a file is missing or unreadable, or only one of {@code
     *     user} and {@code password} is given
     */
    static CassandraClientSettings read(BackendConfig config) {
        Optional<String> dc =
                config.option(CassandraLockOptions.LOCAL_DATACENTER).map(String::trim);
        if (dc.isPresent() && dc.get().isEmpty()) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.LOCAL_DATACENTER + "' is blank");
        }
        Optional<String> user = config.option(CassandraLockOptions.USER);
        Optional<Secret> password = config.secretOption(CassandraLockOptions.PASSWORD);
        if (user.isPresent() != password.isPresent()) {
            throw new LockConfigurationException("Options '" + CassandraLockOptions.USER + "' and '"
                    + CassandraLockOptions.PASSWORD
                    + "' (or passwordFile, passwordEnv) go together: the role to log in as"
                    + " and its password; got only " + (user.isPresent() ? "the user" : "the password"));
        }
        if (user.isPresent() && user.get().isBlank()) {
            throw new LockConfigurationException("Option '" + CassandraLockOptions.USER + "' is blank");
        }
        Optional<TlsSettings> tls = TlsSettings.read(config, false);
        Optional<Path> driverConfig = config.fileOption(CassandraLockOptions.DRIVER_CONFIG);
        return new CassandraClientSettings(dc, user, password, tls, driverConfig);
    }

    /**
     * Fails if {@code config} sets any connection option: the application's session already decides them.
     *
     * @throws LockConfigurationException naming the options given
     */
    static void rejectOn(BackendConfig config) {
        List<String> given =
                OPTIONS.stream().filter(name -> config.option(name).isPresent()).toList();
        if (!given.isEmpty()) {
            throw new LockConfigurationException("Option" + (given.size() > 1 ? "s " : " ") + given
                    + " cannot be used with an application's CqlSession (CassandraLockers.using): the session already"
                    + " has its contact points, data center, credentials and TLS; configure them on the session");
        }
    }
}
