package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;

/** Broken: leases never expire. Whatever lease time is asked for, the store keeps the lock for a day. */
public final class NeverExpiresProvider extends BrokenProvider {

    /** For the service loader. */
    public NeverExpiresProvider() {
        super("broken-neverexpires");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(forADay(r));
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(forADay(r), d);
            }
        };
    }

    private static LockRequest forADay(LockRequest r) {
        return new LockRequest(r.key(), r.ownerId(), Duration.ofDays(1), r.lossListener());
    }
}
