package io.distlock.kit.selftest;

import io.distlock.Capabilities;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
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
        return new Rewrapping(correct, lease -> new WrappedLease(lease) {
            @Override
            public OptionalLong fencingToken() {
                return OptionalLong.empty();
            }
        }) {
            @Override
            public Capabilities capabilities() {
                Capabilities c = correct.capabilities();
                return new Capabilities(false, false, c.pushWakeUp(), c.leaseModel());
            }
        };
    }
}
