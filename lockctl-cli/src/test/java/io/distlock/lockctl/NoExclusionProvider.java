package io.distlock.lockctl;

import io.distlock.kit.ForwardingBackend;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.Set;

/**
 * {@code noexclusion://space}, a broken store for the conformance command's test: every request locks a key of its
 * own, so everyone is granted the lock at once.
 */
public final class NoExclusionProvider implements LockBackendProvider {

    /** For {@link java.util.ServiceLoader}. */
    public NoExclusionProvider() {}

    @Override
    public String name() {
        return "noexclusion";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("noexclusion");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return new ForwardingBackend(new MemoryLockBackendProvider().open(config)) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest request) {
                return backend.tryAcquire(privateKey(request));
            }

            @Override
            public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
                return backend.acquire(privateKey(request), deadline);
            }
        };
    }

    private static LockRequest privateKey(LockRequest r) {
        return new LockRequest(r.key() + "#" + r.ownerId(), r.ownerId(), r.leaseTime(), r.lossListener());
    }
}
