package io.distlock.spi;

import java.util.Set;

/**
 * Creates a {@link LockBackend} for the URIs of one store. Found with {@link java.util.ServiceLoader}: list the
 * implementation in {@code META-INF/services/io.distlock.spi.LockBackendProvider}. Needs a public no-argument
 * constructor and must be cheap to construct: it is instantiated during discovery even when another store is used.
 */
public interface LockBackendProvider {

    /** A short human-readable name, e.g. {@code zookeeper}; shown in logs and error messages. */
    String name();

    /** The URI schemes this provider opens, lower case, e.g. {@code zk} and {@code zookeeper}. */
    Set<String> uriSchemes();

    /**
     * Connects to the store described by {@code config}. Blocks until connected, at most for {@link
     * BackendConfig#connectTimeout()}.
     *
     * <p>Read every option through {@code config}, then call {@link BackendConfig#rejectUnknownOptions} before
     * connecting, so that a misspelt option fails at once instead of after a connect timeout. Options the provider did
     * not read are reported to the user as unknown (and the backend closed) in any case.
     *
     * @throws io.distlock.LockConfigurationException if the URI or an option is malformed
     * @throws io.distlock.LockBackendException if the store cannot be reached in time
     */
    LockBackend open(BackendConfig config);
}
