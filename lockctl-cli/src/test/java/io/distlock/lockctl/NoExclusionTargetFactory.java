package io.distlock.lockctl;

import io.distlock.LockKind;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;

/**
 * A deliberately broken bench target, {@code peer:no-exclusion://x}: every lock, read, write and permit is granted at
 * once, whoever holds it, so a contended run on it must be flagged by the engine's check of the run's history.
 */
public final class NoExclusionTargetFactory implements BenchTargetFactory {

    private static final String PREFIX = "peer:no-exclusion://";

    @Override
    public boolean supports(String spec) {
        return spec.startsWith(PREFIX);
    }

    @Override
    public BenchTarget open(String spec) {
        return new BenchTarget() {
            @Override
            public Held acquire(String key) {
                return () -> {};
            }

            @Override
            public Held acquire(String key, LockKind kind, int permits) {
                return () -> {};
            }

            @Override
            public void close() {}
        };
    }

    /** Its threads may share it: there is nothing to keep apart. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return PREFIX + "x (tests only: grants everything at once, a broken lock)";
    }
}
