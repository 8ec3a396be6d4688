package io.distlock.lockctl;

import io.distlock.Capabilities;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.spi.LockRequest;
import java.util.Optional;
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
        LockBackend memory = new MemoryLockBackendProvider().open(config);
        return new LockBackend() {
            @Override
            public Capabilities capabilities() {
                return memory.capabilities();
            }

            @Override
            public Optional<Lease> tryAcquire(LockRequest request) {
                return memory.tryAcquire(request);
            }

            @Override
            public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
                return memory.acquire(request, deadline);
            }

            @Override
            public OptionalLong renew(Lease lease) {
                return LOSE.get() ? OptionalLong.empty() : memory.renew(lease);
            }

            @Override
            public boolean release(Lease lease) {
                return memory.release(lease);
            }

            @Override
            public void close() {
                memory.close();
            }
        };
    }
}
