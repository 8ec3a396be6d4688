package io.distlock.kit.selftest;

import io.distlock.LockKind;
import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;

/** Broken: one permit too many. A semaphore of N permits is served as one of N + 1. */
public final class OverGrantsPermitsProvider extends BrokenProvider {

    /** For the service loader. */
    public OverGrantsPermitsProvider() {
        super("broken-overgrantspermits");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(oneMore(r));
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(oneMore(r), d);
            }
        };
    }

    private static LockRequest oneMore(LockRequest r) {
        return r.kind() != LockKind.PERMIT
                ? r
                : new LockRequest(r.key(), r.ownerId(), r.leaseTime(), r.lossListener(), r.kind(), r.limit() + 1);
    }
}
