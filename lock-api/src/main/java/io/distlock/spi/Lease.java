package io.distlock.spi;

import java.util.OptionalLong;

/**
 * One acquisition of a lock, as the backend that granted it knows it. Backends implement it with whatever they need
 * to renew and release this acquisition (owner value, node path, lease id, revision): per-acquisition state lives
 * here.
 */
public interface Lease {

    /** The key of the lock. */
    String key();

    /** The owner id of this acquisition, as given in its {@link LockRequest}. */
    String ownerId();

    /** The fencing token of this acquisition; present exactly when the backend declares fencing. */
    OptionalLong fencingToken();

    /**
     * The {@link io.distlock.Ticker} reading until which the store guarantees the lock to this owner, as of the last
     * grant or renewal. Measure it from a reading taken <em>before</em> the request that granted or renewed the lease
     * was sent, less any clock-drift allowance of the algorithm, so it never overstates the guarantee.
     */
    long validUntilNanos();

    /**
     * Called once by the locker, on its timer thread, if the lock is still held a moment after its grant (at most
     * 200 ms later): for work that most short-held locks never need, such as watching the lock's entry in the store for
     * a deletion by someone else. It runs in the locker's pass over the locks granted meanwhile, together with the
     * locker's own deferred timers, so a backend needs no timer thread of its own for it and a lock released within
     * that moment costs nothing. The lock may be released or lost while this runs, so what it starts must stop itself
     * then (or check first). Must not block (send any request asynchronously); an exception is logged. Does nothing by
     * default.
     */
    default void onStillHeld() {}
}
