package io.distlock.spi;

import io.distlock.Capabilities;
import io.distlock.LockHolder;
import io.distlock.LockState;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * What a store adapter implements: the store-specific half of a lock. Everything common (argument checks, owner ids,
 * renewal scheduling, loss detection, multi-key ordering, re-entrancy checks, async wrappers) is done by the locker in
 * {@code lock-api} and must not be repeated here.
 *
 * <p>Implementations are thread-safe and keep per-acquisition state in their {@link Lease} objects, never in shared
 * mutable fields. Every method may block for the store's round trips but must give up within the backend's
 * configured operation timeout with a {@link io.distlock.LockBackendException}. No method may leave a lock entry of a
 * failed, timed-out, interrupted or cancelled attempt behind in the store.
 */
public interface LockBackend extends AutoCloseable {

    /** What this backend guarantees; constant for its lifetime. */
    Capabilities capabilities();

    /**
     * One non-blocking attempt (seed 000 Listing 7): takes the lock if it is free, never waits for its holder.
     *
     * @return the lease if the lock was taken; empty if another owner holds it or won the race, or if the store
     *     granted it only after the backend's operation timeout (the late grant is deleted again before this returns,
     *     so nothing is left in the store)
     */
    Optional<Lease> tryAcquire(LockRequest request);

    /**
     * Takes the lock, waiting for it until {@code deadline} (seed 000 Listing 6). Fair backends enqueue once and
     * wait for their turn; they must not retry {@link #tryAcquire} in a loop. Must not return empty before the
     * deadline has passed.
     *
     * @return the lease, or empty if the deadline passed first while the store was answering (nothing is left in the
     *     store)
     * @throws io.distlock.LockBackendException if the deadline passed while the store could not be reached (the same
     *     on every backend: the user sees a store failure, not a lock held by someone else)
     * @throws InterruptedException if the thread is interrupted while waiting (nothing is left in the store); the
     *     locker also interrupts a waiting thread when it is closed
     */
    Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException;

    /**
     * Takes the lock without holding a thread while waiting: the asynchronous form of {@link #acquire}. Backends whose
     * client is asynchronous implement it natively (watches, callbacks, scheduled polls); the default runs the
     * blocking {@link #acquire} on {@code blockingExecutor}, one thread per pending call.
     *
     * <p>The future completes with the lease, with empty once the deadline has passed (nothing left in the store), or
     * exceptionally with a {@link io.distlock.LockBackendException} (also when the deadline passed while the store
     * could not be reached, as for {@link #acquire}). The locker adopts the lease on its own threads, so completing
     * the future from a client's I/O or event thread is fine. Cancelling it withdraws the attempt: the backend
     * removes the waiter's entry from the store, and releases a grant that arrives after the cancellation. If the grant
     * won the race, the future is already complete with the lease and {@code cancel} returns false: the caller owns it.
     *
     * @param blockingExecutor where a backend may block, and where it may complete the future: the locker supplies
     *     its worker threads, and adopts a grant completed by one of this executor's tasks on that same thread, without
     *     handing it to another (a grant completed anywhere else is handed to a worker), so the caller's dependent
     *     stages run under that task: complete a grant there holding no lock of the backend's own. The default blocks
     *     here; a native implementation may run its own steps here or not use it
     */
    default CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        return BlockingAcquisition.start(this, request, deadline, blockingExecutor);
    }

    /**
     * Sets the lease to end {@code leaseTime} from now if it is still ours. The locker calls it every third of the
     * lease time with {@link LockRequest#leaseTime()} to keep a lock alive, and with other lengths to shorten or
     * lengthen a fixed lease ({@link io.distlock.RemoteLock#extend}, {@link io.distlock.RemoteLock#releaseAfter}): a
     * shorter {@code leaseTime} must shorten the entry's time to live in the store. Called only for {@link
     * io.distlock.LeaseModel#RENEWED_TTL} backends (never for {@code SESSION} ones, whose leases the locker ends by
     * itself).
     *
     * @param leaseTime the new lease length, measured from before the request is sent; positive
     * @return the new validity, a {@link io.distlock.Ticker} reading measured from before the renewing request was
     *     sent (as {@link Lease#validUntilNanos()} is for the grant), already past if {@code leaseTime} is shorter
     *     than the backend's clock-drift allowance; empty if the store no longer holds the lease for this owner (it
     *     expired, was deleted, or another owner holds the key) — the lock is then lost
     * @throws io.distlock.LockBackendException if the store could not be asked; the locker retries until the lease's
     *     validity runs out
     */
    OptionalLong renew(Lease lease, Duration leaseTime);

    /**
     * Frees the lock if, and only if, the store still holds it for this lease's owner (compare-and-delete). A lease
     * that is no longer ours is left alone. Also stops any keep-alive of this lease. Safe to call again for the same
     * lease (a retry after a lost reply).
     *
     * @return true if the store still held the entry for this owner and it is now deleted; false if it was already
     *     gone (expired, deleted out of band, its session lost) — the locker then reports the lock as lost
     * @throws io.distlock.LockBackendException if the store could not be asked; the entry then runs out with its lease
     */
    boolean release(Lease lease);

    /**
     * Reads who holds {@code key} in every space (lock, read-write lock, semaphore) from the store itself, and how many
     * wait where the store keeps a queue: for backends that declare {@link Capabilities.Operation#INSPECT}. Read-only:
     * writes nothing, renews nothing. The label of each holder comes from its stored owner id ({@link
     * io.distlock.LockHolder#of}).
     *
     * @param key a checked key
     * @throws io.distlock.LockBackendException if the store could not be asked
     * @throws UnsupportedOperationException if the backend does not declare {@code INSPECT} (the default)
     */
    default LockState inspect(String key) {
        throw new UnsupportedOperationException("This backend does not offer inspection (Capabilities.operations() "
                + capabilities().operations() + " lacks INSPECT)");
    }

    /**
     * Every key held under this backend's namespace (its URI's path or prefix), each as {@link #inspect} would
     * answer, in no promised order: a scan of the namespace, which costs what the backend's documentation says. For
     * backends that declare {@link Capabilities.Operation#INSPECT}.
     *
     * @throws io.distlock.LockBackendException if the store could not be asked
     * @throws UnsupportedOperationException if the backend does not declare {@code INSPECT} (the default)
     */
    default List<LockState> listHeld() {
        throw new UnsupportedOperationException("This backend does not offer inspection (Capabilities.operations() "
                + capabilities().operations() + " lacks INSPECT)");
    }

    /**
     * Deletes the entries of every holder of {@code key} (in every space), as an administrator would with the store's
     * own tool, and leaves the waiters queued: the next one is served as after a release. The holders are told as
     * after an entry deleted by hand (their watch, or their next renewal). For backends that declare {@link
     * Capabilities.Operation#BREAK}.
     *
     * @param key a checked key
     * @return the holders whose entries this call deleted; empty if the key was free
     * @throws io.distlock.LockBackendException if the store could not be asked (some entries may be deleted)
     * @throws UnsupportedOperationException if the backend does not declare {@code BREAK} (the default)
     */
    default List<LockHolder> breakLock(String key) {
        throw new UnsupportedOperationException("This backend does not offer breaking a lock"
                + " (Capabilities.operations() " + capabilities().operations() + " lacks BREAK)");
    }

    /**
     * Asks every holder of {@code key} (in every space) to let go, for backends that declare {@link
     * Capabilities.Operation#REQUEST_RELEASE}: writes what the holders' lockers watch or read (a node's data, a watched
     * key, a cell read at renewal), so that each holder's {@link LockRequest#lossListener()} hears {@link
     * LeaseLossListener#releaseRequested()} within the bound the backend documents. Deletes nothing and grants nothing:
     * a holder decides. A request that finds the key free leaves nothing behind.
     *
     * @param key a checked key
     * @return the holders asked; empty if the key was free
     * @throws io.distlock.LockBackendException if the store could not be asked
     * @throws UnsupportedOperationException if the backend does not declare {@code REQUEST_RELEASE} (the default)
     */
    default List<LockHolder> requestRelease(String key) {
        throw new UnsupportedOperationException("This backend does not offer asking a holder to let go"
                + " (Capabilities.operations() " + capabilities().operations() + " lacks REQUEST_RELEASE)");
    }

    /**
     * How many requests this backend has sent to its store since it was opened (round trips, counting each
     * instance of a multi-instance store), for the benchmark's "store requests per acquisition". Empty when the
     * backend does not count them.
     */
    default OptionalLong storeRequests() {
        return OptionalLong.empty();
    }

    /** Disconnects from the store. Locks still held are not released here; the locker releases them first. */
    @Override
    void close();
}
