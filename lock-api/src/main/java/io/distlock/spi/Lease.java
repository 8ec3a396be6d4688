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
}
