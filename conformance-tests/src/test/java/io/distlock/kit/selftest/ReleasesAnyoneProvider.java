package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** Broken: release frees the key whoever holds it (a plain delete instead of compare-and-delete). */
public final class ReleasesAnyoneProvider extends BrokenProvider {

    private static final Map<String, Lease> CURRENT = new ConcurrentHashMap<>();

    /** For the service loader. */
    public ReleasesAnyoneProvider() {
        super("broken-releasesanyone");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return remember(correct.tryAcquire(r));
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return remember(correct.acquire(r, d));
            }

            @Override
            public boolean release(Lease lease) {
                Lease holder = CURRENT.getOrDefault(lease.key(), lease);
                return correct.release(holder);
            }
        };
    }

    private static Optional<Lease> remember(Optional<Lease> lease) {
        lease.ifPresent(l -> CURRENT.put(l.key(), l));
        return lease;
    }
}
