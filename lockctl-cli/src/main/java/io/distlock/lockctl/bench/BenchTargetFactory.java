package io.distlock.lockctl.bench;

/**
 * Opens {@link BenchTarget}s for the target specs it recognises, e.g. {@code peer:curator://127.0.0.1:2181/locks}.
 * Found with {@link java.util.ServiceLoader} (list the class in {@code
 * META-INF/services/io.distlock.lockctl.bench.BenchTargetFactory}); a spec no factory supports is opened as a distlock
 * lock URI. Needs a public no-argument constructor.
 */
public interface BenchTargetFactory {

    /** Whether this factory opens {@code spec}; must not connect. */
    boolean supports(String spec);

    /**
     * Connects to the store named by {@code spec}. Blocks until connected.
     *
     * @throws Exception if the spec is malformed or the store cannot be reached
     */
    BenchTarget open(String spec) throws Exception;

    /**
     * Whether one target opened from {@code spec} may be used by several threads at once, each holding its locks as
     * its own ({@code lockctl bench --threads}): false (the default) where a lock belongs to the target's process or
     * connection, e.g. a queue key named after the client's one lease, which two of its threads would both take as
     * theirs. Must not connect.
     */
    default boolean sharedByThreads(String spec) {
        return false;
    }

    /** One line for {@code lockctl bench --help}: the spec's form and what it measures. */
    String describe();
}
