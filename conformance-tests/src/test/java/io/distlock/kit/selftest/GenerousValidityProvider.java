package io.distlock.kit.selftest;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import java.time.Duration;
import java.util.OptionalLong;

/**
 * Broken: reports validity too generously. The store keeps each lease for the lease time, but the grant and every
 * renewal say it is valid for ten lease times, so {@code isHeld()} says true long after the store let the lock go.
 */
public final class GenerousValidityProvider extends BrokenProvider {

    private static final int GENEROSITY = 10;

    /** For the service loader. */
    public GenerousValidityProvider() {
        super("broken-generousvalidity");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        long extra = (GENEROSITY - 1) * config.leaseTime().toNanos();
        return new Rewrapping(correct, lease -> new WrappedLease(lease) {
            @Override
            public long validUntilNanos() {
                return inner.validUntilNanos() + extra;
            }
        }) {
            @Override
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                OptionalLong renewed = super.renew(lease, leaseTime);
                return renewed.isPresent() ? OptionalLong.of(renewed.getAsLong() + extra) : renewed;
            }
        };
    }
}
