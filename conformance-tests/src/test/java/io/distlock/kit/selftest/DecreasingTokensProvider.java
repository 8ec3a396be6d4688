package io.distlock.kit.selftest;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.LockBackend;
import java.util.OptionalLong;

/** Broken: declares fencing but hands out tokens that fall with every acquisition. */
public final class DecreasingTokensProvider extends BrokenProvider {

    /** For the service loader. */
    public DecreasingTokensProvider() {
        super("broken-fencing");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new Rewrapping(correct, lease -> new WrappedLease(lease) {
            @Override
            public OptionalLong fencingToken() {
                return OptionalLong.of(1_000_000_000L - inner.fencingToken().orElseThrow());
            }
        });
    }
}
