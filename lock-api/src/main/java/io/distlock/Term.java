package io.distlock;

import java.util.OptionalLong;

/**
 * One term of leadership of one candidate: from its election ({@link LeadershipListener#elected}) to its end ({@link
 * LeadershipListener#revoked}). A term is a held lock on the election's key; it ends when the lock is released (the
 * candidate stepped down or left) or lost (its lease could not be kept, or its entry was deleted).
 */
public interface Term {

    /** The election's name. */
    String election();

    /** The identity the candidate joined with. */
    String identity();

    /**
     * The term's epoch: the fencing token of the election's lock, strictly greater than every earlier term's, where the
     * backend gives one ({@link Capabilities#fencing()}); empty where it does not (Redis). Hand it to the resources the
     * leader writes, so that they refuse a deposed leader's late writes (see {@link RemoteLock#fencingToken()}).
     */
    OptionalLong epoch();

    /**
     * Whether this term is still the candidate's: its lock held and the term not ended. False from the moment the lock
     * is known lost or released, which may be before {@link LeadershipListener#revoked} is called. Asks the store
     * nothing: the lock's lease is kept in the background, and a lease that could not be kept turns this false.
     */
    boolean isCurrent();
}
