package io.distlock.kit.selftest;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.time.Duration;
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
        return new Rewrapping(correct, Optimistic::new) {
            @Override
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                Optimistic o = (Optimistic) lease;
                correct.renew(o.inner, leaseTime); // the answer is ignored: the defect
                o.validUntil = config.ticker().read() + leaseNanos;
                return OptionalLong.of(o.validUntil);
            }
        };
    }

    private static final class Optimistic extends WrappedLease {
        volatile long validUntil;

        Optimistic(Lease inner) {
            super(inner);
            this.validUntil = inner.validUntilNanos();
        }

        @Override
        public long validUntilNanos() {
            return validUntil;
        }
    }
}
