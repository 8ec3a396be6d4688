package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.spi.LockRequest;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;

/**
 * A deliberately broken backend for the kit's self-test: the in-memory backend (each broken scheme in its own lock
 * space) with one promise broken by a subclass. The kit must fail the test that guards that promise.
 */
abstract class BrokenProvider implements LockBackendProvider {

    private final String scheme;

    BrokenProvider(String scheme) {
        this.scheme = scheme;
    }

    @Override
    public String name() {
        return scheme;
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of(scheme);
    }

    @Override
    public LockBackend open(BackendConfig config) {
        BackendConfig memory = new BackendConfig(
                URI.create("memory://" + scheme),
                Map.of(),
                config.leaseTime(),
                config.connectTimeout(),
                config.ticker(),
                config.clock());
        return breakIt(new MemoryLockBackendProvider().open(memory), config);
    }

    /** The broken backend around a correct one. */
    abstract LockBackend breakIt(LockBackend correct, BackendConfig config);

    /** A lease around the correct backend's one; subclasses change what they break. */
    abstract static class WrappedLease implements Lease {
        final Lease inner;

        WrappedLease(Lease inner) {
            this.inner = inner;
        }

        @Override
        public String key() {
            return inner.key();
        }

        @Override
        public String ownerId() {
            return inner.ownerId();
        }

        @Override
        public OptionalLong fencingToken() {
            return inner.fencingToken();
        }

        @Override
        public long validUntilNanos() {
            return inner.validUntilNanos();
        }
    }

    /** Hands out every granted lease wrapped, and gives the correct backend back its own lease to renew or release. */
    static class Rewrapping extends ForwardingBackend {
        private final Function<Lease, WrappedLease> wrap;

        Rewrapping(LockBackend correct, Function<Lease, WrappedLease> wrap) {
            super(correct);
            this.wrap = wrap;
        }

        @Override
        public Optional<Lease> tryAcquire(LockRequest request) {
            return backend.tryAcquire(request).map(wrap);
        }

        @Override
        public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
            return backend.acquire(request, deadline).map(wrap);
        }

        @Override
        public OptionalLong renew(Lease lease, Duration leaseTime) {
            return backend.renew(((WrappedLease) lease).inner, leaseTime);
        }

        @Override
        public boolean release(Lease lease) {
            return backend.release(((WrappedLease) lease).inner);
        }
    }
}
