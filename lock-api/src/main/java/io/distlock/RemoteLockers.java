package io.distlock;

import io.distlock.internal.LockerFactory;
import io.distlock.spi.LockBackendProvider;
import java.net.URI;

/**
 * Opens {@link RemoteLocker}s by URI; the backend is chosen by the URI's scheme among the providers found on the
 * classpath (see {@link io.distlock.spi.LockBackendProvider}).
 *
 * <pre>{@code
 * try (RemoteLocker locker = RemoteLockers.open("zk://127.0.0.1:2181/locks?ttl=30s")) { ... }
 * }</pre>
 *
 * <p>A scheme is available when the module that provides it is on the class path (or module path): {@code memory:}
 * (in-JVM, in {@code lock-api} itself) and {@code zk://}/{@code zookeeper://} (module {@code backend-zookeeper}); each
 * further backend module documents its schemes in its page under the project's docs/, and an unknown scheme is answered with the
 * schemes actually found. Options are query parameters; the common
 * ones are {@code ttl} (the lease time, default 30s) and {@code connectTimeout} (default 10s); each backend documents
 * its own. An option no backend reads is an error, not silently ignored.
 *
 * <p>Discovery follows the example of r2dbc and SLF4J: the system property {@value #PROVIDER_PROPERTY} naming a
 * provider class skips discovery; a provider that fails to load is logged and skipped; two providers for one scheme
 * give a warning and the first found wins; an unknown scheme is answered with the schemes available.
 */
public final class RemoteLockers {

    /** System property naming a {@link io.distlock.spi.LockBackendProvider} class to use instead of discovery. */
    public static final String PROVIDER_PROPERTY = "distlock.provider";

    private RemoteLockers() {}

    /**
     * Opens a locker for {@code uri}, e.g. {@code memory:}, {@code zk://h1:2181,h2:2181/locks?ttl=20s}. Blocks until
     * connected, at most for the {@code connectTimeout} option.
     *
     * @throws NullPointerException if {@code uri} is null
     * @throws LockConfigurationException if the URI is malformed, its scheme unknown, or an option unknown or malformed
     * @throws LockBackendException if the store cannot be reached within the connect timeout
     */
    public static RemoteLocker open(String uri) {
        return builder().uri(uri).build();
    }

    /** Same as {@link #open(String)}. */
    public static RemoteLocker open(URI uri) {
        return builder().uri(uri).build();
    }

    /**
     * The provider that {@link #open(String)} uses for URIs of {@code scheme} (e.g. {@code zk}), found as the class
     * describes: for wrapping it and handing the wrapper to {@link RemoteLockerBuilder#provider}, or for opening a
     * backend directly through the SPI.
     *
     * @throws LockConfigurationException if the provider set by {@value #PROVIDER_PROPERTY} cannot be loaded or does not
     *     serve {@code scheme}, or no provider serves it (the message lists the schemes available)
     */
    public static LockBackendProvider provider(String scheme) {
        return LockerFactory.provider(scheme);
    }

    /** A builder for a locker: the URI plus typed equivalents of the options. */
    public static RemoteLockerBuilder builder() {
        return new RemoteLockerBuilder();
    }
}
