package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import java.util.OptionalLong;

/**
 * One lock implementation under measurement, opened in a worker JVM: a distlock locker for a lock URI, or a peer (a
 * third-party lock or a raw-store floor) from the {@code benchmarks} module. The engine calls it from one thread at a
 * time, exactly as it calls every other target, so figures compare like with like; with {@code --threads T}, from T
 * threads at once, each lock its thread's own, which only targets shared by threads ({@link
 * Targets#sharedByThreads}) are given.
 */
public interface BenchTarget extends AutoCloseable {

    /**
     * Takes the lock on {@code key}, waiting as long as it takes (the mandatory lock).
     *
     * @return the held lock, to be released with {@link Held#release()}
     * @throws Exception if the lock cannot be taken; the run is aborted with this error
     */
    Held acquire(String key) throws Exception;

    /**
     * Takes {@code kind} on {@code key}, waiting as long as it takes: the lock ({@link LockKind#LOCK}, the same as
     * {@link #acquire(String)}), the read or the write side of the read-write lock on {@code key}, or one permit of the
     * semaphore of {@code permits} permits on {@code key}. A target measures only the kinds it overrides this for.
     *
     * @param permits the semaphore's permits ({@link LockKind#PERMIT}; else ignored)
     * @return the held lock, side or permit, to be released with {@link Held#release()}
     * @throws UnsupportedOperationException if this target has no such kind
     * @throws Exception if it cannot be taken; the run is aborted with this error
     */
    default Held acquire(String key, LockKind kind, int permits) throws Exception {
        if (kind == LockKind.LOCK) {
            return acquire(key);
        }
        throw new UnsupportedOperationException("This target measures locks only, not the " + kind.label() + " kind ("
                + getClass().getName() + ")");
    }

    /**
     * How many requests this target has sent to its store since it was opened (each instance of a multi-instance
     * store counted), or empty when it does not count them. Read before and after the measured acquisitions.
     */
    default OptionalLong storeRequests() {
        return OptionalLong.empty();
    }

    /**
     * Joins the election {@code election} as the candidate {@code identity} ({@code --workload failover}): the target
     * calls {@code elected} at once, on any thread, each time this candidate begins to lead (its first "you lead" of a
     * term, as the application would be told it). A target measures failover only if it overrides this.
     *
     * @return the candidacy, to step down with {@link Candidate#stepDown()}; it ends with {@link #close()}
     * @throws UnsupportedOperationException if this target has no election
     * @throws Exception if it cannot join; the run is aborted with this error
     */
    default Candidate join(String election, String identity, Runnable elected) throws Exception {
        throw new UnsupportedOperationException("This target has no election, so it cannot run --workload failover ("
                + getClass().getName()
                + "); use a distlock URI, handoff:<spec> (its lock as an election), peer:curator-leader-latch or"
                + " peer:jetcd-election");
    }

    /** Disconnects; locks still held are not the engine's concern (it releases every lock it takes). */
    @Override
    void close() throws Exception;

    /** A candidate of an election joined through a {@link BenchTarget}. */
    @FunctionalInterface
    interface Candidate {
        /**
         * Ends this candidate's term, so that the next candidate leads, and queues it again behind the others, so that
         * the election keeps its number of candidates. Returns once the store has been told.
         *
         * @throws Exception if the step-down failed; the run is aborted with this error
         */
        void stepDown() throws Exception;
    }

    /** A lock held through a {@link BenchTarget}. */
    @FunctionalInterface
    interface Held {
        /**
         * Releases the lock; blocks for the store's round trip.
         *
         * @throws Exception if the release failed; the run is aborted with this error
         */
        void release() throws Exception;
    }
}
