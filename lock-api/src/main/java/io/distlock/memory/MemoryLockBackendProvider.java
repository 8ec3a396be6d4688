package io.distlock.memory;

import io.distlock.LockConfigurationException;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.net.URI;
import java.util.Set;

/**
 * The in-JVM backend: {@code memory:} for the process-wide default lock space, {@code memory://name} for a separate
 * named space. Exact semantics with no store to run: FIFO-fair, fencing tokens, leases that expire on the locker's
 * {@link io.distlock.Ticker}, waiters woken by the release (no polling). For users' unit tests and the kit's
 * self-test; it locks nothing across processes.
 */
public final class MemoryLockBackendProvider implements LockBackendProvider {

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public MemoryLockBackendProvider() {}

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("memory");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return new MemoryLockBackend(
                LockSpaces.named(spaceName(config.uri())), config.ticker(), config.clock(), config.lockDelay());
    }

    static String spaceName(URI uri) {
        if (uri.getAuthority() != null) {
            String path = uri.getPath();
            if (path != null && !path.isEmpty() && !path.equals("/")) {
                throw new LockConfigurationException("Malformed memory URI '" + uri + "': nothing may follow the"
                        + " space name; expected memory: or memory://name");
            }
            return uri.getHost() != null ? uri.getHost() : uri.getAuthority();
        }
        String path = uri.isOpaque() ? uri.getSchemeSpecificPart() : uri.getPath();
        String name = path == null ? "" : path.replaceAll("^/+|/+$", "");
        if (name.contains("/")) {
            throw new LockConfigurationException(
                    "Malformed memory URI '" + uri + "'; expected memory: or memory://name");
        }
        return name.isEmpty() ? LockSpaces.DEFAULT : name;
    }
}
