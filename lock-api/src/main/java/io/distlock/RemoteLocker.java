package io.distlock;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A connection to one lock store that hands out {@link RemoteLock}s: the seed's {@code IRemoteLocker}.
 *
 * <p>Obtain one with {@link RemoteLockers#open(String)} or {@link RemoteLockers#builder()}. A locker is thread-safe and
 * meant to be shared: open one per store and process, use it from any number of threads, and close it on shutdown.
 *
 * <h2>Keys</h2>
 * A key names the shared resource. It is any non-blank, valid Unicode string (no unpaired surrogate) of at most {@value
 * #MAX_KEY_BYTES} bytes in UTF-8; each backend encodes it into a valid store name, and every backend accepts every such
 * key. A {@code null} key throws {@link NullPointerException}; a blank, malformed or oversized key throws {@link
 * IllegalArgumentException}.
 *
 * <h2>Two strategies (seed 000, section 3)</h2>
 * <ul>
 *   <li>the <em>mandatory</em> lock, {@link #lock(String)} and {@link #lock(String, Duration)}: the caller waits until
 *       the lock is free and takes it (Theorems 1 and 2: mutual exclusion, every waiter eventually served);
 *   <li>the <em>soft</em> lock, {@link #tryLock(String)}: one attempt that never waits for the holder (Theorems 3 and 4:
 *       mutual exclusion, and among simultaneous attempts on a free lock at least one succeeds).
 * </ul>
 *
 * <h2>Not re-entrant (seed 003)</h2>
 * The rule, for the synchronous calls ({@link #lock(String)}, {@link #lock(String, Duration)}, {@link #tryLock}, {@link
 * #lockAll}, {@code withLock}, {@code withLocks}): the call fails at once with {@link IllegalStateException} if the
 * calling thread took one of its keys through a synchronous call of this same locker and that lock is still held
 * (not released, not lost). It would otherwise wait for itself forever. Nothing else is checked: other threads sharing
 * the locker, and other lockers, wait or fail as usual; locks taken by {@link #lockAsync}/{@link #tryLockAsync} belong
 * to no thread, and the asynchronous calls are never checked (two {@code lockAsync} calls for one key from one
 * event-loop thread both queue; the second is served when the first lock is released). Ownership of a lock is not tied
 * to a thread: a lock may be released from any thread.
 *
 * <h2>Leases</h2>
 * Every lock is a lease. The locker keeps it alive in the background (renewing every third of the lease time, or
 * through the store's session) until it is released. If the lease cannot be kept, the lock is marked lost: {@link
 * RemoteLock#isHeld()} turns false and the listeners of {@link RemoteLock#onLost} are called once. The store decides:
 * a lock whose entry the store dropped or that was deleted out of band is lost too, and a grant that reaches the caller
 * after its lease ran out is never handed over ({@code lock} tries again, {@code tryLock} returns empty).
 *
 * <h2>Errors</h2>
 * Argument errors throw {@link NullPointerException} or {@link IllegalArgumentException}; a call on a closed locker
 * {@link LockerClosedException}. From the store come only {@link LockBackendException} (the client library's exception
 * as its cause), {@link LockTimeoutException} (not granted within {@code maxWait} because another owner held the lock)
 * and {@link LockLostException}; a deadline that passes while the store cannot be reached is a {@link
 * LockBackendException}.
 *
 * <h2>Closing</h2>
 * {@link #close()} ends every call waiting for a lock with {@link LockerClosedException} (nothing is left in the
 * store), ends every candidacy joined through it (a leader told {@link LeadershipListener.Reason#LOCKER_CLOSED}),
 * releases every lock still held through this locker (and, at once, any grant that races with the close), and
 * disconnects. Any later call throws {@link LockerClosedException}.
 */
public interface RemoteLocker extends AutoCloseable {

    /** The largest key accepted, in bytes of its UTF-8 encoding. */
    int MAX_KEY_BYTES = 1024;

    /**
     * Takes the lock on {@code key}, waiting as long as it takes (the mandatory lock, seed 000 Listing 6).
     *
     * <p>Blocks until the lock is granted. Fair backends (see {@link Capabilities#fair()}) serve waiters in arrival
     * order.
     *
     * @return the held lock; release it with {@link RemoteLock#close()}, best in a try-with-resources block
     * @throws InterruptedException if the thread is interrupted while waiting, or was when it called (at once, even on
     *     a free key, clearing the flag); nothing is left held in the store
     * @throws IllegalStateException if the calling thread already holds {@code key} through this locker (see "Not
     *     re-entrant"), or the locker is closed, also while waiting ({@link LockerClosedException})
     * @throws LockBackendException if the store cannot be reached or fails
     */
    RemoteLock lock(String key) throws InterruptedException;

    /**
     * Takes the lock on {@code key}, waiting at most {@code maxWait}.
     *
     * @param maxWait the longest time to wait for the lock; must be positive
     * @return the held lock
     * @throws LockTimeoutException if the lock was not granted within {@code maxWait}; nothing is left held
     * @throws InterruptedException if the thread is interrupted while waiting, or was when it called; nothing is left
     *     held
     * @throws IllegalArgumentException if {@code maxWait} is zero or negative
     * @throws IllegalStateException if the calling thread already holds {@code key} through this locker, or the
     *     locker is closed
     * @throws LockBackendException if the store cannot be reached or fails
     */
    RemoteLock lock(String key, Duration maxWait) throws InterruptedException;

    /**
     * Makes one attempt to take the lock on {@code key} without waiting for its holder (the soft lock, seed 000
     * Listing 7).
     *
     * <p>Blocks only for the store's round trips. Among several simultaneous attempts on a free lock, at least one
     * succeeds (Theorem 4).
     *
     * @return the held lock, or empty if another owner holds it or won the race for it
     * @throws IllegalStateException if the calling thread already holds {@code key} through this locker, or the
     *     locker is closed
     * @throws LockBackendException if the store cannot be reached or fails
     */
    Optional<RemoteLock> tryLock(String key);

    /**
     * Makes one attempt, as {@link #tryLock(String)}, for a lock held for a <em>fixed lease</em>: the locker does not
     * renew it, and it ends {@code leaseTime} after it was granted unless {@linkplain RemoteLock#extend extended} or
     * released first. A holder that dies or hangs holds it at most that long. This is the lock of schedulers that
     * bound a job's hold (ShedLock's {@code lockAtMostFor}, Spring Integration's {@code lock(ttl)}).
     *
     * <p>How the end is kept depends on the backend's {@link Capabilities#leaseModel()}: on {@link
     * LeaseModel#RENEWED_TTL} backends (Redis, Cassandra, {@code memory:}) the store itself drops the entry (Cassandra
     * rounds its time to live up to whole seconds, so a crashed holder's entry may stay up to two seconds longer); on
     * {@link LeaseModel#SESSION} backends (ZooKeeper, etcd) the locker deletes it at the end, and if the holder's
     * process dies first the store frees it when the session expires, which may be sooner. When the lease ends while the
     * lock is still held, the lock is lost: {@link RemoteLock#isHeld()} turns false and its {@code onLost} listeners are
     * called.
     *
     * @param leaseTime how long the lock is held at most; must be positive
     * @return the held lock, or empty if another owner holds it or won the race for it
     * @throws IllegalArgumentException if {@code leaseTime} is zero or negative
     * @throws IllegalStateException if the calling thread already holds {@code key} through this locker, or the
     *     locker is closed
     * @throws LockBackendException if the store cannot be reached or fails
     */
    Optional<RemoteLock> tryLockFor(String key, Duration leaseTime);

    /**
     * Takes the lock on {@code key} as {@link #lock(String)} does, waiting as long as it takes, for a fixed lease of
     * {@code leaseTime} that the locker does not renew (see {@link #tryLockFor}).
     *
     * @param leaseTime how long the lock is held at most, from its grant; must be positive
     * @return the held lock
     * @throws InterruptedException if the thread is interrupted while waiting, or was when it called; nothing is left
     *     held
     * @throws IllegalArgumentException if {@code leaseTime} is zero or negative
     * @throws IllegalStateException if the calling thread already holds {@code key} through this locker, or the
     *     locker is closed
     * @throws LockBackendException if the store cannot be reached or fails
     */
    RemoteLock lockFor(String key, Duration leaseTime) throws InterruptedException;

    /**
     * Takes the lock on {@code key} as {@link #lock(String, Duration)} does, waiting at most {@code maxWait}, for a
     * fixed lease of {@code leaseTime} that the locker does not renew (see {@link #tryLockFor}).
     *
     * @param leaseTime how long the lock is held at most, from its grant; must be positive
     * @param maxWait the longest time to wait for the lock; must be positive
     * @return the held lock
     * @throws LockTimeoutException if the lock was not granted within {@code maxWait}; nothing is left held
     * @throws InterruptedException if the thread is interrupted while waiting, or was when it called; nothing is left
     *     held
     * @throws IllegalArgumentException if {@code leaseTime} or {@code maxWait} is zero or negative
     * @throws IllegalStateException if the calling thread already holds {@code key} through this locker, or the
     *     locker is closed
     * @throws LockBackendException if the store cannot be reached or fails
     */
    RemoteLock lockFor(String key, Duration leaseTime, Duration maxWait) throws InterruptedException;

    /**
     * Takes the locks on all {@code keys}, all or nothing, waiting at most {@code maxWait} in total (seed 003's {@code
     * lock([x,y,z])}).
     *
     * <p>Keys are taken one by one in their natural ({@link String#compareTo}) order, whatever the order given, so two
     * callers with overlapping sets cannot deadlock (seed 001). If a key cannot be taken in time, the ones already
     * taken are released before the exception is thrown.
     *
     * @param keys one or more distinct keys
     * @return the group of held locks, to be closed as one
     * @throws IllegalArgumentException if {@code keys} is empty or holds a key twice, or {@code maxWait} is not
     *     positive
     * @throws LockTimeoutException if not all locks were granted within {@code maxWait}; none is left held
     * @throws InterruptedException if interrupted while waiting, or when called; none is left held
     * @throws IllegalStateException if the calling thread already holds one of the keys, or the locker is closed
     * @throws LockBackendException if the store cannot be reached or fails, also if a lock taken first was lost (not
     *     renewed in time) before the last one was granted; none is left held
     */
    RemoteLockGroup lockAll(Collection<String> keys, Duration maxWait) throws InterruptedException;

    /**
     * Runs {@code action} holding the lock on {@code key} and returns its result; the lock is always released, also
     * when the action throws (seed 003's {@code with}).
     *
     * @throws X whatever {@code action} throws
     * @throws LockTimeoutException if the lock was not granted within {@code maxWait}; the action did not run
     * @throws LockLostException if the lease was lost while the action ran (its result is discarded)
     * @see #lock(String, Duration)
     */
    <T, X extends Exception> T withLock(String key, Duration maxWait, LockedCall<T, X> action)
            throws X, InterruptedException;

    /**
     * Runs {@code action} holding the lock on {@code key}; the lock is always released, also when the action throws.
     *
     * @throws X whatever {@code action} throws
     * @throws LockTimeoutException if the lock was not granted within {@code maxWait}; the action did not run
     * @throws LockLostException if the lease was lost while the action ran
     * @see #lock(String, Duration)
     */
    <X extends Exception> void withLock(String key, Duration maxWait, LockedRun<X> action)
            throws X, InterruptedException;

    /**
     * Runs {@code action} holding the locks on all {@code keys} and returns its result; the locks are always
     * released.
     *
     * @throws X whatever {@code action} throws
     * @throws LockTimeoutException if the locks were not all granted within {@code maxWait}; the action did not run
     * @throws LockLostException if a lease was lost while the action ran
     * @see #lockAll(Collection, Duration)
     */
    <T, X extends Exception> T withLocks(Collection<String> keys, Duration maxWait, LockedCall<T, X> action)
            throws X, InterruptedException;

    /**
     * Runs {@code action} holding the locks on all {@code keys}; the locks are always released.
     *
     * @throws X whatever {@code action} throws
     * @throws LockTimeoutException if the locks were not all granted within {@code maxWait}; the action did not run
     * @throws LockLostException if a lease was lost while the action ran
     * @see #lockAll(Collection, Duration)
     */
    <X extends Exception> void withLocks(Collection<String> keys, Duration maxWait, LockedRun<X> action)
            throws X, InterruptedException;

    /**
     * Asynchronous {@link #lock(String, Duration)}: returns at once. Where the backend implements asynchronous
     * acquisition natively ({@code memory:}, ZooKeeper) no thread is held while waiting, and calls are queued in call
     * order; otherwise the wait runs on a thread of the locker's pool. Not checked for re-entrancy.
     *
     * <p>The future completes with the held lock, or exceptionally with {@link LockTimeoutException}, {@link
     * LockBackendException}, {@link InterruptedException} if the calling thread was interrupted when it called (its
     * flag is left set) or, if the locker is closed meanwhile, {@link LockerClosedException}. Cancelling the
     * future withdraws the waiter from the store. If the grant won the race, the future is already complete and {@code
     * cancel} returns false: the caller owns the lock and must release it. Argument errors and a closed locker are
     * thrown directly. A grant completes the future on a thread of the locker's pool, never on a store client's thread
     * nor on the stack of the release before it, so a dependent stage may block.
     */
    CompletableFuture<RemoteLock> lockAsync(String key, Duration maxWait);

    /**
     * Asynchronous {@link #tryLock(String)}: returns at once; the attempt runs on a thread of the locker's pool. Not
     * checked for re-entrancy. A lock granted to a future cancelled meanwhile is released.
     */
    CompletableFuture<Optional<RemoteLock>> tryLockAsync(String key);

    /**
     * The read-write lock on {@code key}: a read side many hold at once, a write side one holds alone. Separate from
     * the lock on {@code key} (see {@link RemoteReadWriteLock}). Cheap: asks the store nothing until a side is taken.
     *
     * @throws UnsupportedOperationException if the backend offers no read-write locks ({@link Capabilities#kinds()})
     * @throws LockerClosedException if the locker is closed
     */
    RemoteReadWriteLock readWriteLock(String key);

    /**
     * The semaphore on {@code key} with {@code permits} permits: at most that many holders at once (see {@link
     * RemoteSemaphore}). Cheap: asks the store nothing until a permit is taken.
     *
     * @param permits N, at least 1; every user of the semaphore must give the same N
     * @throws IllegalArgumentException if {@code permits} is below 1
     * @throws UnsupportedOperationException if the backend offers no semaphores ({@link Capabilities#kinds()})
     * @throws LockerClosedException if the locker is closed
     */
    RemoteSemaphore semaphore(String key, int permits);

    /**
     * The election named {@code name} (see {@link LeaderElection}): candidates join it, anyone may ask who leads.
     * Cheap: asks the store nothing. An election is the lock on the key {@link LeaderElection#KEY_PREFIX} {@code
     * "%election/"} followed by its name, so elections and locks share one namespace: lock keys starting with {@code
     * %election/} are the elections', and {@code lock(name)} and the election {@code name} never exclude each other.
     *
     * @param name any string a key may be, at most {@link #MAX_KEY_BYTES} bytes in UTF-8 once prefixed
     * @throws NullPointerException if the name is null
     * @throws IllegalArgumentException if the name is blank, not valid Unicode, or too long
     * @throws LockerClosedException if the locker is closed
     */
    LeaderElection election(String name);

    /**
     * The owner label this locker stores with every entry it writes ({@link RemoteLockerBuilder#ownerLabel(String)};
     * default: this process's id and host, e.g. {@code 4711@worker-7}): what {@link #inspect(String)} shows of its
     * holds to anyone.
     */
    String ownerLabel();

    /**
     * Who holds {@code key}, read from the store itself (not from this locker's own view, so it answers for every
     * process): each holder of the key's lock, read-write lock and semaphore with its owner label, when it was granted
     * and when its lease ends (where the store keeps them), its fencing token (where there is one), and how many wait
     * (where the store keeps a queue). Read-only; one or a few store reads (see the backend's documentation).
     *
     * @throws NullPointerException if the key is null
     * @throws IllegalArgumentException if the key is blank or longer than {@link #MAX_KEY_BYTES} bytes
     * @throws UnsupportedOperationException if the backend offers no inspection ({@link Capabilities#operations()})
     * @throws LockBackendException if the store could not be asked
     * @throws LockerClosedException if the locker is closed
     */
    LockState inspect(String key);

    /**
     * Every key held under this locker's namespace (its URI's path or prefix), as {@link #inspect(String)} would show
     * each, in no promised order. A scan of the namespace: its cost per store is in the backend's documentation.
     *
     * @throws UnsupportedOperationException if the backend offers no inspection ({@link Capabilities#operations()})
     * @throws LockBackendException if the store could not be asked
     * @throws LockerClosedException if the locker is closed
     */
    List<LockState> listHeld();

    /**
     * Breaks {@code key} as an administrator would: deletes the entries of its holders (of its lock, read-write lock
     * and semaphore) in the store, whichever process holds them, and leaves its waiters queued; the next one is granted
     * as after a release. Each holder is told it lost the grant ({@link RemoteLock#onLost}) within the bound its
     * backend gives for an entry deleted by hand. Meant for a stuck holder; a holder that is alive may be mid-way
     * through the work the lock guards, which is what fencing tokens are for.
     *
     * @return the holders whose entries were deleted; empty if the key was free
     * @throws NullPointerException if the key is null
     * @throws IllegalArgumentException if the key is blank or longer than {@link #MAX_KEY_BYTES} bytes
     * @throws UnsupportedOperationException if the backend cannot break a lock ({@link Capabilities#operations()})
     * @throws LockBackendException if the store could not be asked (some entries may be deleted)
     * @throws LockerClosedException if the locker is closed
     */
    List<LockHolder> breakLock(String key);

    /**
     * Asks the holders of {@code key} (of its lock, read-write lock and semaphore), whichever process holds them, to
     * let go: each holder's {@link RemoteLock#onReleaseRequested} listeners run within the bound its backend documents,
     * and the holder decides — a holder with no such listener keeps the lock. Nothing is deleted (for that, {@link
     * #breakLock}). Curator's {@code Revoker} is the model.
     *
     * @return the holders asked; empty if the key was free
     * @throws NullPointerException if the key is null
     * @throws IllegalArgumentException if the key is blank or longer than {@link #MAX_KEY_BYTES} bytes
     * @throws UnsupportedOperationException if the backend cannot reach a holder ({@link Capabilities#operations()})
     * @throws LockBackendException if the store could not be asked
     * @throws LockerClosedException if the locker is closed
     */
    List<LockHolder> requestRelease(String key);

    /**
     * What the backend behind this locker guarantees: fencing tokens, fairness, push wake-up, lease model, the kinds of
     * grant it offers.
     */
    Capabilities capabilities();

    /**
     * Ends every waiting call with {@link LockerClosedException}, releases every lock still held through this locker
     * and disconnects from the store. Idempotent. Blocks for the releases' round trips, and at most a few seconds for
     * the waiting calls to leave the store.
     */
    @Override
    void close();
}
