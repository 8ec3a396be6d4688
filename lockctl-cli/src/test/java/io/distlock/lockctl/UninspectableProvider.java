package io.distlock.lockctl;

import io.distlock.Capabilities;
import io.distlock.kit.ForwardingBackend;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.util.Set;

/**
 * {@code uninspectable://space}: the in-JVM store declaring no {@link Capabilities.Operation operation}, as a store
 * without inspection or breaking does, so that a test sees what {@code lockctl locks} does with one.
 */
public final class UninspectableProvider implements LockBackendProvider {

    /** For {@link java.util.ServiceLoader}. */
    public UninspectableProvider() {}

    @Override
    public String name() {
        return "uninspectable";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("uninspectable");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return new ForwardingBackend(new MemoryLockBackendProvider().open(config)) {
            @Override
            public Capabilities capabilities() {
                Capabilities memory = backend.capabilities();
                return new Capabilities(
                        memory.fencing(), memory.fair(), memory.pushWakeUp(), memory.leaseModel(), memory.kinds());
            }
        };
    }
}
