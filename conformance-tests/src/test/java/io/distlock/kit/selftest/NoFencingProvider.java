package io.distlock.kit.selftest;

import io.distlock.Capabilities;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Not broken: a backend that honestly declares it gives no fencing tokens and no fairness (the in-memory backend with
 * its tokens hidden), to check that the kit skips the matching tests with a reason instead of failing or dropping
 * them.
 */
public final class NoFencingProvider extends BrokenProvider {

    /** For the service loader. */
    public NoFencingProvider() {
        super("nofencing-memory");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new Forwarding(correct) {
            @Override
            public Capabilities capabilities() {
                Capabilities c = correct.capabilities();
                return new Capabilities(false, false, c.pushWakeUp(), c.leaseModel());
            }

            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(r).map(Tokenless::new);
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(r, d).map(Tokenless::new);
            }

            @Override
            public boolean renew(Lease lease) {
                return correct.renew(((Tokenless) lease).inner);
            }

            @Override
            public void release(Lease lease) {
                correct.release(((Tokenless) lease).inner);
            }
        };
    }

    private record Tokenless(Lease inner) implements Lease {
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
            return OptionalLong.empty();
        }

        @Override
        public long validUntilNanos() {
            return inner.validUntilNanos();
        }
    }
}
