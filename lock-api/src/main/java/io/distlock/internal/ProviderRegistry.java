package io.distlock.internal;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import io.distlock.spi.LockBackendProvider;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the {@link LockBackendProvider} for a URI scheme: an explicit override first, then {@link ServiceLoader}
 * discovery where a broken provider is logged and skipped.
 */
public final class ProviderRegistry {

    private static final Logger log = LoggerFactory.getLogger(ProviderRegistry.class);

    private ProviderRegistry() {}

    /**
     * The provider for {@code scheme}.
     *
     * @throws LockConfigurationException if the override cannot be loaded or does not serve the scheme, or no
     *     provider serves it (the message lists the schemes available)
     */
    public static LockBackendProvider forScheme(String scheme, ClassLoader loader) {
        String wanted = scheme.toLowerCase(Locale.ROOT);
        String override = System.getProperty(RemoteLockers.PROVIDER_PROPERTY);
        if (override != null && !override.isBlank()) {
            LockBackendProvider provider = instantiate(override.trim(), loader);
            if (!provider.uriSchemes().contains(wanted)) {
                throw new LockConfigurationException(
                        "Provider " + override + " set by -D" + RemoteLockers.PROVIDER_PROPERTY + " serves "
                                + provider.uriSchemes() + ", not the scheme '" + scheme + "'");
            }
            return provider;
        }
        List<LockBackendProvider> matching = new ArrayList<>();
        Set<String> available = new TreeSet<>();
        for (LockBackendProvider provider : discover(loader)) {
            Set<String> schemes = provider.uriSchemes();
            available.addAll(schemes);
            if (schemes.contains(wanted)) {
                matching.add(provider);
            }
        }
        if (matching.isEmpty()) {
            throw new LockConfigurationException("Unknown lock URI scheme '" + scheme + "'; available: "
                    + String.join(", ", available)
                    + ". Add the backend's module (e.g. io.distlock:backend-zookeeper) to the classpath.");
        }
        if (matching.size() > 1) {
            log.warn(
                    "Several lock providers serve scheme '{}': {}; using {}. Set -D{} to choose.",
                    scheme,
                    matching.stream().map(p -> p.getClass().getName()).toList(),
                    matching.get(0).getClass().getName(),
                    RemoteLockers.PROVIDER_PROPERTY);
        }
        return matching.get(0);
    }

    /** Every provider that loads, in {@link ServiceLoader} order; broken ones are logged and skipped. */
    public static List<LockBackendProvider> discover(ClassLoader loader) {
        List<LockBackendProvider> providers = new ArrayList<>();
        Iterator<LockBackendProvider> it =
                ServiceLoader.load(LockBackendProvider.class, loader).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                providers.add(it.next());
            } catch (ServiceConfigurationError | LinkageError broken) {
                log.warn("Skipping a lock provider that failed to load: {}", broken.toString(), broken);
            }
        }
        return providers;
    }

    private static LockBackendProvider instantiate(String className, ClassLoader loader) {
        try {
            Class<?> type = Class.forName(className, true, loader);
            if (!LockBackendProvider.class.isAssignableFrom(type)) {
                throw new LockConfigurationException(className + " set by -D" + RemoteLockers.PROVIDER_PROPERTY
                        + " does not implement " + LockBackendProvider.class.getName());
            }
            return (LockBackendProvider) type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new LockConfigurationException(
                    "Cannot load the provider " + className + " set by -D" + RemoteLockers.PROVIDER_PROPERTY + ": " + e,
                    e);
        }
    }
}
