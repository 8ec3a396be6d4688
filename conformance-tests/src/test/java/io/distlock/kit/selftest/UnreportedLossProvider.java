package io.distlock.kit.selftest;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Broken: a lost lease is never reported. Renewal asks the store but ignores its answer: it always says yes and
 * extends the lease's validity, even after the store dropped the lock.
 */
public final class UnreportedLossProvider extends BrokenProvider {

    /** For the service loader. */
    public UnreportedLossProvider() {
        super("broken-unreportedloss");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        long leaseNanos = config.leaseTime().toNanos();
        return new Forwarding(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(r).map(Optimistic::new);
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(r, d).map(Optimistic::new);
            }

            @Override
            public boolean renew(Lease lease) {
                Optimistic o = (Optimistic) lease;
                correct.renew(o.inner); // the answer is ignored: the defect
                o.validUntil = config.ticker().read() + leaseNanos;
                return true;
            }

            @Override
            public void release(Lease lease) {
                correct.release(((Optimistic) lease).inner);
            }
        };
    }

    private static final class Optimistic implements Lease {
        final Lease inner;
        volatile long validUntil;

        Optimistic(Lease inner) {
            this.inner = inner;
            this.validUntil = inner.validUntilNanos();
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
            return validUntil;
        }
    }
}
