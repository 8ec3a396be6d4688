package io.distlock.cassandra;

import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/** One of the backend's two algorithms: seed 000's queue (section 5) or the legacy shadow table (section 4). */
interface LockAlgorithm {

    /** One attempt that never waits for a holder. */
    Optional<CassandraLease> tryAcquire(LockRequest request);

    /** Takes the lock, waiting until the deadline; nothing of a failed attempt is left in the store. */
    Optional<CassandraLease> acquire(LockRequest request, Deadline deadline) throws InterruptedException;

    /**
     * {@link #acquire} without a thread: the future completes on a driver or timer thread, as {@link
     * io.distlock.spi.LockBackend#acquireAsync} describes; cancelling it withdraws the attempt.
     */
    CompletableFuture<Optional<CassandraLease>> acquireAsync(LockRequest request, Deadline deadline);

    /**
     * Rewrites the lease's cells with a TTL that keeps them {@code leaseTime} if the owner cell is still there: {@link
     * #renewalCheck}, then {@link #renewalRewrite}.
     */
    default OptionalLong renew(CassandraLease lease, Duration leaseTime) {
        return renewalCheck(lease) ? renewalRewrite(lease, leaseTime) : OptionalLong.empty();
    }

    /** The renewal's first step: whether the lease's owner cell is still there, ours. */
    boolean renewalCheck(CassandraLease lease);

    /**
     * The renewal's second step: rewrites the lease's cells with a TTL that keeps them {@code leaseTime}; empty when
     * the lease is gone.
     */
    OptionalLong renewalRewrite(CassandraLease lease, Duration leaseTime);

    /** Deletes the lease's cells; true if the owner cell was still there. */
    boolean release(CassandraLease lease);

    /** Whether waiters are served in ticket order. */
    boolean fair();

    /** Stops the algorithm's own threads, if it has any. */
    default void close() {}
}
