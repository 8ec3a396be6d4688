package io.distlock;

import java.time.Duration;
import java.util.Optional;

/**
 * One candidate's place in an election ({@link LeaderElection#join}): it waits for the election's lock as {@link
 * RemoteLocker#lockAsync} does, leads while it holds it, and after a lost term queues again, until it is closed.
 * Thread-safe.
 */
public interface Candidacy extends AutoCloseable {

    /** The election's name. */
    String election();

    /** The identity the candidate joined with: what {@link LeaderElection#leader()} shows while it leads. */
    String identity();

    /** Whether this candidate leads now: it has a {@linkplain Term#isCurrent() current} term. Asks the store nothing. */
    boolean isLeader();

    /** The current term, while this candidate leads. */
    Optional<Term> currentTerm();

    /**
     * Waits until this candidate leads, at most {@code maxWait}; the blocking form beside the listener.
     *
     * @return true as soon as it leads (at once if it does); false if {@code maxWait} passed first, or the candidacy
     *     was closed meanwhile
     * @throws IllegalArgumentException if {@code maxWait} is zero or negative
     * @throws IllegalStateException if the candidacy is closed (its locker's close closes it too)
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    boolean awaitLeadership(Duration maxWait) throws InterruptedException;

    /**
     * Ends the current term, if any, and queues again: releases the election's lock (the next candidate is granted at
     * once; on a fair backend every candidate already waiting leads before this one again, on another one this one may
     * win again), calls {@link LeadershipListener#revoked} with {@link LeadershipListener.Reason#STEPPED_DOWN}. Blocks
     * for the release's round trip.
     *
     * @return whether it led
     * @throws IllegalStateException if the candidacy is closed
     * @throws LockBackendException if the store could not be told of the release: the term has ended all the same
     *     (its listener told, the candidate queued again), and the lock's lease runs out by itself
     */
    boolean stepDown();

    /**
     * Ends {@code term} and queues again, as {@link #stepDown()} does, if {@code term} is this candidacy's current
     * term; otherwise does nothing: for code that acts on a term it was told of (a listener, a framework's "yield"),
     * which must not end a later term of the same candidate if its own has ended meanwhile.
     *
     * @return whether {@code term} was the current term and is now ended
     * @throws NullPointerException if {@code term} is null
     * @throws IllegalStateException if the candidacy is closed
     */
    boolean stepDown(Term term);

    /**
     * Leaves the election for good: a waiting candidate withdraws from the store's queue, a leader releases the lock at
     * once (the next candidate is granted without waiting for a lease to run out) and is told {@link
     * LeadershipListener.Reason#LEFT}. Never queues again. Idempotent; blocks for the release's round trip.
     *
     * @throws LockBackendException if the store could not be told of the release: the candidacy is closed all the
     *     same, and the lock's lease runs out by itself
     */
    @Override
    void close();
}
