package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Broken: renewal extends the key whoever holds it and says yes while the key exists, like a plain Redis {@code
 * PEXPIRE key ttl} without an owner check.
 */
public final class RenewsAnyoneProvider extends BrokenProvider {

    private static final Map<String, Lease> CURRENT = new ConcurrentHashMap<>();

    /** For the service loader. */
    public RenewsAnyoneProvider() {
        super("broken-renewsanyone");
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
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                return correct.renew(CURRENT.getOrDefault(lease.key(), lease), leaseTime);
            }
        };
    }

    private static Optional<Lease> remember(Optional<Lease> lease) {
        lease.ifPresent(l -> CURRENT.put(l.key(), l));
        return lease;
    }
}
