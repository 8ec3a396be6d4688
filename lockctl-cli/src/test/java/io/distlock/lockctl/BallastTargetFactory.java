package io.distlock.lockctl;

import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;

/**
 * A bench target of known weight, {@code peer:ballast://<bytes>}: each held lock keeps a {@code byte[<bytes>]} until it
 * is released, and nothing else is stored. It checks what the engine measures (the client heap per held lock), not a
 * lock: there is no store and no exclusion.
 */
public final class BallastTargetFactory implements BenchTargetFactory {

    private static final String PREFIX = "peer:ballast://";

    @Override
    public boolean supports(String spec) {
        return spec.startsWith(PREFIX);
    }

    @Override
    public BenchTarget open(String spec) {
        int bytes = Integer.parseInt(spec.substring(PREFIX.length()));
        return new BenchTarget() {
            @Override
            public Held acquire(String key) {
                byte[] ballast = new byte[bytes];
                return () -> ballast[0] = 1; // keeps the array reachable until released
            }

            @Override
            public void close() {}
        };
    }

    @Override
    public String describe() {
        return PREFIX + "<bytes> (tests only: each held lock keeps <bytes> of heap)";
    }
}
