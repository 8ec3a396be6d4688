package io.distlock.spi;

import io.distlock.Capabilities;
import java.util.Optional;

/**
 * What a store adapter implements: the store-specific half of a lock. Everything common (argument checks, owner ids,
 * renewal scheduling, loss detection, multi-key ordering, re-entrancy checks, async wrappers) is done by the locker in
 * {@code lock-api} and must not be repeated here.
 *
 * <p>Implementations are thread-safe and keep per-acquisition state in their {@link Lease} objects, never in shared
 * mutable fields. Every method may block for the store's round trips but must give up within the backend's
 * configured operation timeout with a {@link io.distlock.LockBackendException}. No method may leave a lock entry of a
 * failed, timed-out or interrupted attempt behind in the store.
 */
public interface LockBackend extends AutoCloseable {

    /** What this backend guarantees; constant for its lifetime. */
    Capabilities capabilities();

    /**
     * One non-blocking attempt (seed 000 Listing 7): takes the lock if it is free, never waits for its holder.
     *
     * @return the lease if the lock was taken, empty if another owner holds it or won the race
     */
    Optional<Lease> tryAcquire(LockRequest request);

    /**
     * Takes the lock, waiting for it until {@code deadline} (seed 000 Listing 6). Fair backends enqueue once and
     * wait for their turn; they must not retry {@link #tryAcquire} in a loop.
     *
     * @return the lease, or empty if the deadline passed first (nothing is left in the store)
     * @throws InterruptedException if the thread is interrupted while waiting (nothing is left in the store)
     */
    Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException;

    /**
     * Extends the lease by {@link LockRequest#leaseTime()} if it is still ours. Called by the locker every third of
     * the lease time for {@link io.distlock.LeaseModel#RENEWED_TTL} backends; on success the backend updates {@link
     * Lease#validUntilNanos()}.
     *
     * @return true if the lease is still ours and was extended, false if it is gone
     * @throws io.distlock.LockBackendException if the store could not be asked; the locker retries until the lease's
     *     validity runs out
     */
    boolean renew(Lease lease);

    /**
     * Frees the lock if, and only if, the store still holds it for this lease's owner (compare-and-delete). A lease
     * that is no longer ours is left alone, silently. Also stops any keep-alive of this lease.
     */
    void release(Lease lease);

    /** Disconnects from the store. Locks still held are not released here; the locker releases them first. */
    @Override
    void close();
}
