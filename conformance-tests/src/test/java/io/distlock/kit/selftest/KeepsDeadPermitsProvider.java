package io.distlock.kit.selftest;

import io.distlock.LockKind;
import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;

/**
 * Broken: a permit outlives its holder. Permits are granted for a day whatever the lease time, so a holder that dies
 * without releasing takes its permit with it (a release still frees it).
 */
public final class KeepsDeadPermitsProvider extends BrokenProvider {

    /** For the service loader. */
    public KeepsDeadPermitsProvider() {
        super("broken-keepsdeadpermits");
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
        return r.kind() != LockKind.PERMIT
                ? r
                : new LockRequest(r.key(), r.ownerId(), Duration.ofDays(1), r.lossListener(), r.kind(), r.limit());
    }
}
