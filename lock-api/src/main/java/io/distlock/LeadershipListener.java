package io.distlock;

import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Told when a candidate becomes leader and when it stops being one ({@link LeaderElection#join}). Calls for one
 * candidacy come one at a time and in order, {@code elected} before the {@code revoked} of the same term, on the
 * executor given to {@code join} (by default the locker's listener executor, {@link
 * RemoteLockerBuilder#listenerExecutor}), never on a thread that keeps the locker's time, so a slow listener delays no
 * renewal. A listener that throws is logged and the election goes on.
 *
 * <p>A term that ended before its {@code elected} call began (a step-down, a leave, a loss, or its lock's validity run
 * out, while the executor was slow to run the call) is not told at all, neither {@code elected} nor {@code revoked}:
 * the listener is never told that it leads once another candidate may lead. A {@link Candidacy#stepDown()} or {@link Candidacy#close()} from
 * another thread while {@code elected} runs waits for it to return (at most the lease time) before the lock is let go.
 * {@link Candidacy#awaitLeadership} and {@link Candidacy#isLeader} answer from the term itself, so a candidate may see
 * that it leads before its listener is told.
 */
public interface LeadershipListener {

    /** Why a term ended. */
    enum Reason {
        /** The candidate stepped down ({@link Candidacy#stepDown()}) and queued again. */
        STEPPED_DOWN,
        /** The candidate left the election ({@link Candidacy#close()}). */
        LEFT,
        /**
         * The term's lock was lost: its lease could not be kept, or its entry was deleted or dropped by the store. The
         * candidate queues again.
         */
        LOST,
        /** The locker was closed, which ends every candidacy through it. */
        LOCKER_CLOSED
    }

    /** The candidate leads: {@code term} began. */
    void elected(Term term);

    /**
     * The candidate no longer leads: {@code term} ended, for {@code reason}. By the time this is called another
     * candidate may lead already; {@link Term#isCurrent()} turned false before.
     */
    void revoked(Term term, Reason reason);

    /** A listener of two lambdas. */
    static LeadershipListener of(Consumer<? super Term> elected, BiConsumer<? super Term, Reason> revoked) {
        Objects.requireNonNull(elected, "elected");
        Objects.requireNonNull(revoked, "revoked");
        return new LeadershipListener() {
            @Override
            public void elected(Term term) {
                elected.accept(term);
            }

            @Override
            public void revoked(Term term, Reason reason) {
                revoked.accept(term, reason);
            }
        };
    }
}
