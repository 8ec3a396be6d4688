package io.distlock;

import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * A held lock on one key: the seed's {@code IRemoteLock}, released by {@link #close()} (seed 000, Listing 2).
 *
 * <p>Thread-safe. Ownership is not tied to the thread that took the lock: any thread may release it.
 *
 * <pre>{@code
 * try (RemoteLock lock = locker.lock("account:42", Duration.ofSeconds(10))) {
 *     account.withdraw(150, lock.fencingToken());
 * }
 * }</pre>
 */
public interface RemoteLock extends AutoCloseable {

    /** The key this lock guards. */
    String key();

    /**
     * What this grant is: {@link LockKind#LOCK} for a lock, {@link LockKind#READ} or {@link LockKind#WRITE} for a side
     * of a {@link RemoteReadWriteLock}, {@link LockKind#PERMIT} for a {@link RemoteSemaphore}'s permit.
     */
    LockKind kind();

    /**
     * The owner id of this acquisition: unique per acquisition (128 random bits, the host and the process id), so a
     * stale handle can never be mistaken for the current holder.
     */
    String ownerId();

    /**
     * A number that grows strictly with every acquisition of this key, for a guarded resource to reject writes from a
     * holder whose lease has since passed to someone else. Empty if the backend cannot give one (see {@link
     * Capabilities#fencing()}).
     */
    OptionalLong fencingToken();

    /**
     * Whether this lock is still held: false once released or lost. A true answer is only as fresh as the last
     * renewal; it never outlives {@link #validUntil()}. Does not block.
     */
    boolean isHeld();

    /**
     * The wall-clock instant until which the store guarantees this lock to its holder, as of the last renewal.
     * Compare it with your own clock only with the clock-drift caveats of your backend in mind.
     */
    Instant validUntil();

    /**
     * Registers a listener called once if this lock is lost (its lease ran out, the store dropped or deleted its
     * entry, or its session ended) while it was meant to be held. Not called on a normal release. If the lock is
     * already lost, the listener is called at once on the calling thread; otherwise it runs on the locker's listener
     * executor ({@link RemoteLockerBuilder#listenerExecutor}; by default one thread of the locker's own, never the
     * thread that renews leases, so a slow listener delays no renewal).
     *
     * @return this lock
     */
    RemoteLock onLost(Consumer<? super RemoteLock> listener);

    /**
     * Registers a listener called once, on {@code executor}, if this lock is lost; see {@link #onLost(Consumer)}. If
     * the lock is already lost, the listener is handed to {@code executor} at once.
     *
     * @return this lock
     */
    RemoteLock onLost(Consumer<? super RemoteLock> listener, Executor executor);

    /**
     * Registers a listener told when this lock is at risk of being lost — its renewals (or its session's keep-alive)
     * failing and the validity left below the locker's threshold — and again if it recovers: see {@link
     * LeaseRiskListener}. Runs on the locker's listener executor. A lock already lost or released never calls it.
     *
     * @return this lock
     */
    RemoteLock onAtRisk(LeaseRiskListener listener);

    /**
     * Registers a listener told when this lock is at risk, and again if it recovers, on {@code executor}; see {@link
     * #onAtRisk(LeaseRiskListener)}.
     *
     * @return this lock
     */
    RemoteLock onAtRisk(LeaseRiskListener listener, Executor executor);

    /**
     * Registers a listener called when somebody asks this lock's holder to let go ({@link
     * RemoteLocker#requestRelease(String)}, from any process): once for each request that reaches this lock while it is
     * held, within the bound its backend documents. The listener decides — typically it finishes or abandons the work
     * and calls {@link #release()}; a lock with no such listener keeps its lease. If a request reached the lock before
     * the listener was registered, the listener is called at once for it. Runs on the locker's listener executor; a
     * lock already released or lost never calls it.
     *
     * @return this lock
     */
    RemoteLock onReleaseRequested(Consumer<? super RemoteLock> listener);

    /**
     * Registers a listener called, on {@code executor}, when somebody asks this lock's holder to let go; see {@link
     * #onReleaseRequested(Consumer)}.
     *
     * @return this lock
     */
    RemoteLock onReleaseRequested(Consumer<? super RemoteLock> listener, Executor executor);

    /**
     * Sets this lock's lease to end {@code leaseTime} from now, and stops renewing it: from then on it is a fixed lease
     * (see {@link RemoteLocker#tryLockFor}), lengthened or shortened. Blocks for the store's round trip on {@link
     * LeaseModel#RENEWED_TTL} backends; on {@link LeaseModel#SESSION} ones only the locker's timer moves.
     *
     * @param leaseTime the new lease, from now; must be positive
     * @return true if the lock was still held and now ends then; false if it was already released or lost
     * @throws IllegalArgumentException if {@code leaseTime} is zero or negative
     * @throws LockBackendException if the store could not be told; the lease then keeps its previous end (and is no
     *     longer renewed)
     */
    boolean extend(Duration leaseTime);

    /**
     * Releases the lock {@code delay} from now instead of at once: the entry stays in the store, not renewed, and ends
     * after {@code delay}, so that nobody can take the key meanwhile (ShedLock's {@code lockAtLeastFor}). The handle
     * is given up at once: {@link #isHeld()} turns false, the calling thread no longer holds the key for the
     * re-entrancy rule, a later {@link #release()} says {@link ReleaseResult#ALREADY_RELEASED}, and no {@code onLost}
     * listener is called. The locker deletes the entry at the end; should its process die first, a {@link
     * LeaseModel#RENEWED_TTL} store still drops it at the end (Cassandra up to two seconds later), while a {@link
     * LeaseModel#SESSION} store frees it when the session expires, which may be sooner. Closing the locker frees it at
     * once on {@code SESSION} backends and leaves it to its time to live on the others.
     *
     * @param delay how long the lock stays taken; zero or negative releases it now, as {@link #release()}
     * @return {@link ReleaseResult#RELEASED} if it was held (and now ends after {@code delay}); {@link
     *     ReleaseResult#ALREADY_RELEASED} or {@link ReleaseResult#ALREADY_LOST} otherwise
     * @throws LockBackendException if the store could not be told; the entry then ends with its previous lease
     */
    ReleaseResult releaseAfter(Duration delay);

    /**
     * Releases the lock if this handle still holds it, and says what happened. It never releases another owner's
     * lock: the store deletes the lock only if it still carries this acquisition's owner id. Blocks for the store's
     * round trip.
     *
     * @return {@link ReleaseResult#RELEASED} the first time; {@link ReleaseResult#ALREADY_RELEASED} after that; {@link
     *     ReleaseResult#ALREADY_LOST} if the lease was lost before the release
     * @throws LockBackendException if the store could not be told; the lease then runs out by itself
     */
    ReleaseResult release();

    /** Releases the lock, see {@link #release()}; calling it again is a no-op. */
    @Override
    void close();
}
