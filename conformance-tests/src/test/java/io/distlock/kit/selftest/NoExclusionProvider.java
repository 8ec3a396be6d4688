package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;

/** Broken: no exclusion. Every request locks its own private key, so everyone is granted the lock at once. */
public final class NoExclusionProvider extends BrokenProvider {

    /** For the service loader. */
    public NoExclusionProvider() {
        super("broken-noexclusion");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(privateKey(r));
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(privateKey(r), d);
            }
        };
    }

    private static LockRequest privateKey(LockRequest r) {
        return new LockRequest(r.key() + "#" + r.ownerId(), r.ownerId(), r.leaseTime(), r.lossListener());
    }
}
