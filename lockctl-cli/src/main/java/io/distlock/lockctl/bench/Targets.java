package io.distlock.lockctl.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Opens a target spec: a peer if a {@link BenchTargetFactory} on the classpath supports it, the unfair retry loop on a
 * lock URI ({@code unfair:<uri>}), the lock hand-off of any target as an election
 * ({@code handoff:<spec>}), else a distlock URI.
 */
public final class Targets {

    private Targets() {}

    /**
     * Opens {@code spec}; blocks until connected.
     *
     * @throws Exception if the spec is malformed, names no known store, or the store cannot be reached
     */
    public static BenchTarget open(String spec) throws Exception {
        for (BenchTargetFactory factory : factories()) {
            if (factory.supports(spec)) {
                return factory.open(spec);
            }
        }
        if (spec.startsWith(UnfairRetryTarget.PREFIX)) {
            return new UnfairRetryTarget(spec);
        }
        if (spec.startsWith(LockHandOffTarget.PREFIX)) {
            return new LockHandOffTarget(spec);
        }
        if (spec.startsWith("peer:")) {
            throw new IllegalArgumentException("Unknown peer '" + spec + "'; peers on the classpath: "
                    + (factories().isEmpty()
                            ? "none (peers come with the benchmarks module: scripts/bench-peers)"
                            : describeAll()));
        }
        return new DistlockTarget(spec);
    }

    /**
     * Whether a target of {@code spec} may be used by several threads at once ({@link
     * BenchTargetFactory#sharedByThreads}); a distlock locker always may. Does not connect.
     */
    public static boolean sharedByThreads(String spec) {
        for (BenchTargetFactory factory : factories()) {
            if (factory.supports(spec)) {
                return factory.sharedByThreads(spec);
            }
        }
        return true;
    }

    /** One line per peer factory on the classpath, for help texts. */
    public static String describeAll() {
        List<String> lines = new ArrayList<>();
        for (BenchTargetFactory factory : factories()) {
            lines.add(factory.describe());
        }
        return String.join("; ", lines);
    }

    /** The unfair retry loop's spec on lock URI {@code uri}: seed 000's old algorithm's shape. */
    public static String unfair(String uri) {
        return UnfairRetryTarget.PREFIX + uri;
    }

    private static List<BenchTargetFactory> factories() {
        List<BenchTargetFactory> found = new ArrayList<>();
        ServiceLoader.load(BenchTargetFactory.class, Targets.class.getClassLoader())
                .forEach(found::add);
        return found;
    }
}
