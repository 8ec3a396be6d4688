package io.distlock.cassandra;

import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;

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

    /**
     * A renewal of {@code lease}: rewrites its cells with the TTL of the lease plus the lock-delay ({@link Ttl#held})
     * and answers the validity, the lease's alone from before the rewrite ({@code validity}); empty if it was released
     * meanwhile, or if the rewrite landed after the validity ran out (this process paused, or the store slow). Then,
     * without a lock-delay or past it, the cells may have expired between the check and the rewrite, which brought
     * them back while another owner may hold the lock: they are withdrawn. Within the lock-delay they cannot have
     * expired: they are written again with the TTL of the delay left, so that the key stays taken until the delay
     * after the validity ends, as a crashed holder's would (a paused holder learns of its loss before anybody else is
     * granted).
     *
     * @param rewrite rewrites the lease's cells with the TTL given (seconds); false if the lease was released
     * @param withdraw deletes the lease's cells
     */
    static OptionalLong renewal(
            CassandraLease lease,
            Duration leaseTime,
            Duration lockDelay,
            Ticker ticker,
            LeaseValidity validity,
            IntPredicate rewrite,
            Runnable withdraw) {
        long sent = ticker.read();
        if (!rewrite.test(Ttl.held(leaseTime, lockDelay))) {
            return OptionalLong.empty(); // released meanwhile
        }
        long late = ticker.read() - lease.validUntilNanos();
        if (late > 0) {
            long delayLeft = lockDelay.toNanos() - late;
            if (delayLeft <= 0) {
                withdraw.run();
            } else {
                // False if released meanwhile: the release deleted the cells (and its slot may be reused already).
                rewrite.test(Ttl.seconds(Duration.ofNanos(delayLeft)));
            }
            return OptionalLong.empty();
        }
        long validUntil = validity.until(sent, leaseTime);
        lease.extendTo(validUntil);
        return OptionalLong.of(validUntil);
    }

    /** Stops the algorithm's own threads, if it has any. */
    default void close() {}
}
