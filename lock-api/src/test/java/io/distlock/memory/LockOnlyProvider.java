package io.distlock.memory;

import io.distlock.Capabilities;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.Set;

/**
 * The in-memory backend declaring the lock alone: no kinds beyond it, no operations. For the tests of what a locker
 * refuses on such a backend (inspection, breaking, reading an election's leader).
 */
final class LockOnlyProvider implements LockBackendProvider {

    @Override
    public String name() {
        return "lock-only";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("lock-only");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        LockBackend memory = new MemoryLockBackendProvider().open(config);
        Capabilities without =
                new Capabilities(true, true, true, memory.capabilities().leaseModel());
        return (LockBackend) Proxy.newProxyInstance(
                LockBackend.class.getClassLoader(), new Class<?>[] {LockBackend.class}, (p, m, args) -> {
                    if (m.getName().equals("capabilities")) {
                        return without;
                    }
                    if (m.isDefault()) {
                        return InvocationHandler.invokeDefault(p, m, args);
                    }
                    return m.invoke(memory, args);
                });
    }
}
