package io.distlock.lockctl;

import io.distlock.kit.ForwardingBackend;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code losing://space}: the in-JVM store, except that renewals fail once {@link #LOSE} is set, so that a test can
 * make a held lock be lost for real (the locker's renewal finds it gone and reports the loss).
 */
public final class LosingProvider implements LockBackendProvider {

    /** When set, every renewal answers "no longer yours". */
    static final AtomicBoolean LOSE = new AtomicBoolean();

    /** For {@link java.util.ServiceLoader}. */
    public LosingProvider() {}

    @Override
    public String name() {
        return "losing";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("losing");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return new ForwardingBackend(new MemoryLockBackendProvider().open(config)) {
            @Override
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                return LOSE.get() ? OptionalLong.empty() : backend.renew(lease, leaseTime);
            }
        };
    }
}
