package io.distlock.internal;

import io.distlock.Candidacy;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.LeadershipListener.Reason;
import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.Term;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One candidate of an election: waits for the election's lock through the locker's {@code lockAsync} (no thread held
 * while waiting where the backend waits natively), asked for with the candidate's identity as its owner label; a grant
 * begins a {@link Term}, the lock's loss or release ends it, and after a loss or a step-down the candidate queues
 * again, until it leaves. At any moment it waits or leads or has left, never two at once. Its listener is told in order
 * through a {@link SerialExecutor}, never under the candidacy's lock (a direct executor runs it on the telling thread).
 */
final class DefaultCandidacy implements Candidacy {

    private static final Logger log = LoggerFactory.getLogger(DefaultCandidacy.class);

    /** How long a candidate whose wait failed in the store waits before it asks again the first time. */
    static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    /**
     * The longest pause between two asks while waits keep failing: each failure doubles the pause up to this. A wait
     * that failed after lasting longer than this begins a new series at {@link #FIRST_RETRY}.
     */
    static final Duration LONGEST_RETRY = Duration.ofSeconds(30);

    private static final Runnable NOTHING = () -> {};

    private final Elections parts;
    private final LeaderElection election;
    private final String identity;
    private final Ask ask;
    private final LeadershipListener listener;
    private final SerialExecutor told;

    private boolean closed; // guarded by this
    private CompletableFuture<RemoteLock> waiting; // guarded by this
    private boolean starting; // guarded by this: a wait is being asked for
    private CandidateTerm term; // guarded by this
    private long waitAskedNanos; // guarded by this: when the current wait was asked for
    private Duration nextRetry = FIRST_RETRY; // guarded by this

    DefaultCandidacy(
            Elections parts, LeaderElection election, String identity, LeadershipListener listener, Executor executor) {
        this.parts = parts;
        this.election = election;
        this.identity = identity;
        this.ask = Ask.exclusive(election.key(), Optional.empty(), parts.leaseTime())
                .labelled(identity);
        this.listener = listener;
        this.told = new SerialExecutor(
                executor, "The leadership listener of '" + identity + "' in election '" + election.name() + "'");
    }

    @Override
    public String election() {
        return election.name();
    }

    @Override
    public String identity() {
        return identity;
    }

    /** Waits for the election's lock, unless it waits, leads or has left already. */
    void queue() {
        synchronized (this) {
            if (closed || term != null || waiting != null || starting) {
                return;
            }
            starting = true; // asked outside the lock, which isLeader() and the listener's calls take
        }
        CompletableFuture<RemoteLock> wait;
        try {
            // Without a deadline: a wait that ended and were asked for again would lose its place in a fair queue
            wait = parts.async().lockAsyncWithoutDeadline(ask);
        } catch (LockerClosedException e) {
            synchronized (this) {
                starting = false;
            }
            left();
            return;
        }
        boolean withdrawn;
        synchronized (this) {
            starting = false;
            withdrawn = closed;
            if (!withdrawn) {
                waiting = wait;
                waitAskedNanos = System.nanoTime();
            }
        }
        if (withdrawn) {
            wait.cancel(false);
            wait.thenAccept(RemoteLock::release); // a grant that won the race with the cancel
            return;
        }
        // lockAsync completes every grant on one of the locker's workers (AsyncAcquirer adopts it there): taken there,
        // without another hand-off. Only a wait done before this line runs it on this thread, which may be join()'s,
        // which promises to return at once without running a listener (on a direct executor) inside it: handed on.
        Thread asking = Thread.currentThread();
        wait.whenComplete((lock, failure) -> {
            if (Thread.currentThread() == asking) {
                onWorker(() -> granted(wait, lock, failure));
            } else {
                granted(wait, lock, failure);
            }
        });
    }

    /** Runs {@code task} on one of the locker's workers; on this thread once they are shut down (the locker closing). */
    private void onWorker(Runnable task) {
        try {
            parts.workers().execute(task);
        } catch (RejectedExecutionException closing) {
            task.run();
        }
    }

    private void granted(CompletableFuture<RemoteLock> wait, RemoteLock lock, Throwable failure) {
        if (failure != null) {
            waitEnded(
                    wait,
                    failure instanceof CompletionException && failure.getCause() != null
                            ? failure.getCause()
                            : failure);
            return;
        }
        CandidateTerm elected;
        Runnable tell = NOTHING;
        synchronized (this) {
            if (waiting != wait || closed) {
                elected = null;
            } else {
                waiting = null;
                nextRetry = FIRST_RETRY;
                term = elected = new CandidateTerm(lock);
                // Queued under the lock, so that the term's end, queued under it too, is told after.
                tell = told.enqueue(() -> tellElected(elected));
                notifyAll();
            }
        }
        tell.run();
        if (elected == null) {
            lock.release(); // the candidate left while the grant was on its way
            return;
        }
        lock.onLost(l -> ended(elected, Reason.LOST), parts.workers()); // not on the timer's thread
    }

    private void waitEnded(CompletableFuture<RemoteLock> wait, Throwable cause) {
        Duration pause;
        boolean firstOrLongest;
        synchronized (this) {
            if (waiting != wait) {
                return; // withdrawn by a close
            }
            waiting = null;
            if (System.nanoTime() - waitAskedNanos > LONGEST_RETRY.toNanos()) {
                nextRetry = FIRST_RETRY; // the wait stood for a while: a new failure, not the last one's series
            }
            pause = nextRetry;
            nextRetry = pause.multipliedBy(2).compareTo(LONGEST_RETRY) < 0 ? pause.multipliedBy(2) : LONGEST_RETRY;
            firstOrLongest = pause.equals(FIRST_RETRY) || pause.equals(LONGEST_RETRY);
        }
        if (cause instanceof CancellationException) {
            return;
        }
        if (cause instanceof LockerClosedException) {
            left();
            return;
        }
        // A store that stays down is said at its first failure and then every LONGEST_RETRY, not at every ask
        if (firstOrLongest) {
            log.warn(
                    "Candidate '{}' of election '{}' could not wait for its lock; asking again in {} (pauses double"
                            + " while it fails, up to {})",
                    identity,
                    election.name(),
                    DurationText.of(pause),
                    DurationText.of(LONGEST_RETRY),
                    cause);
        } else {
            log.debug(
                    "Candidate '{}' of election '{}' could not wait for its lock; asking again in {}",
                    identity,
                    election.name(),
                    DurationText.of(pause),
                    cause);
        }
        try {
            CompletableFuture.delayedExecutor(pause.toNanos(), TimeUnit.NANOSECONDS, parts.workers())
                    .execute(this::queue);
        } catch (RejectedExecutionException lockerClosed) {
            left();
        }
    }

    /** The term ended by itself: its lock was lost. The candidate queues again. */
    private void ended(CandidateTerm ended, Reason reason) {
        Runnable tell;
        synchronized (this) {
            if (term != ended) {
                return; // stepped down or left first
            }
            term = null;
            tell = told.enqueue(() -> tellRevoked(ended, reason));
            notifyAll();
        }
        tell.run();
        queue();
    }

    /**
     * Tells the listener that {@code elected} began, unless it has ended already: a term that a step-down, a leave or
     * a loss ended before its {@code elected} was told (its listener's executor was slow to run it, or busy) is never
     * told, neither its {@code elected} nor its {@code revoked}: the listener would be told it leads when another
     * candidate may lead already.
     */
    private void tellElected(CandidateTerm elected) {
        synchronized (this) {
            // A term whose lock's validity ran out is over, though its loss may not have been noticed yet (the
            // validity timer late): isHeld() notices it, and the loss ends the term untold.
            if (term != elected || !elected.lock.isHeld()) {
                elected.untold = true;
                return;
            }
            elected.tellingOn = Thread.currentThread();
        }
        try {
            listener.elected(elected);
        } finally {
            synchronized (this) {
                elected.tellingOn = null;
                notifyAll();
            }
        }
    }

    /**
     * Waits, under the candidacy's lock, while {@code ending}'s {@code elected} is being told on another thread (its
     * term just ended by a step-down or a leave from elsewhere): the lock is released, and the next leader elected,
     * only after the listener returned from it, so that a candidate that stepped down is not told it leads while
     * another does. At most the lease time, then on with a warning (a listener that blocks).
     */
    private void awaitTold(CandidateTerm ending) {
        long deadline = System.nanoTime() + parts.leaseTime().toNanos();
        boolean interrupted = false;
        try {
            while (ending.tellingOn != null && ending.tellingOn != Thread.currentThread()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    log.warn(
                            "The leadership listener of '{}' in election '{}' has been in elected() for {}; its term"
                                    + " ends without waiting longer",
                            identity,
                            election.name(),
                            DurationText.of(parts.leaseTime()));
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Tells the listener that {@code ended} ended, unless its beginning was never told ({@link #tellElected}). */
    private void tellRevoked(CandidateTerm ended, Reason reason) {
        synchronized (this) {
            if (ended.untold) {
                return;
            }
        }
        listener.revoked(ended, reason);
    }

    /** Marks the candidacy as left without a term to end: its locker closed under its wait. */
    private void left() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        parts.candidacies().remove(this);
    }

    @Override
    public synchronized boolean isLeader() {
        return term != null && term.lock.isHeld();
    }

    @Override
    public synchronized Optional<Term> currentTerm() {
        return isLeader() ? Optional.of(term) : Optional.empty();
    }

    @Override
    public boolean awaitLeadership(Duration maxWait) throws InterruptedException {
        Checks.positive(maxWait, "maxWait");
        long deadline = System.nanoTime() + maxWait.toNanos();
        synchronized (this) {
            ensureOpen();
            while (true) {
                if (isLeader()) {
                    return true;
                }
                long left = deadline - System.nanoTime();
                if (closed || left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    @Override
    public boolean stepDown() {
        return stepDown(Optional.empty());
    }

    @Override
    public boolean stepDown(Term expected) {
        return stepDown(Optional.of(Objects.requireNonNull(expected, "term")));
    }

    /** Ends the current term, if there is one and it is {@code expected} when given. */
    private boolean stepDown(Optional<Term> expected) {
        CandidateTerm ending;
        Runnable tell;
        synchronized (this) {
            ensureOpen();
            ending = term;
            if (ending == null || (expected.isPresent() && expected.get() != ending)) {
                return false;
            }
            term = null;
            // Queued before the release, so that on one executor it comes before the next leader is told.
            tell = told.enqueue(() -> tellRevoked(ending, Reason.STEPPED_DOWN));
            notifyAll();
            awaitTold(ending);
        }
        tell.run();
        try {
            ending.lock.release();
        } finally {
            queue();
        }
        return true;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(
                    "Candidacy of '" + identity + "' in election '" + election.name() + "' is closed; join again");
        }
    }

    @Override
    public void close() {
        leave(Reason.LEFT);
    }

    /** The locker closes: leaves, a leader told {@link Reason#LOCKER_CLOSED}. */
    void lockerClosed() {
        leave(Reason.LOCKER_CLOSED);
    }

    private void leave(Reason reason) {
        CandidateTerm ending;
        CompletableFuture<RemoteLock> wait;
        Runnable tell = NOTHING;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            ending = term;
            term = null;
            wait = waiting;
            waiting = null;
            if (ending != null) {
                tell = told.enqueue(() -> tellRevoked(ending, reason));
            }
            notifyAll();
            if (ending != null) {
                awaitTold(ending);
            }
        }
        tell.run();
        parts.candidacies().remove(this);
        if (wait != null) {
            wait.cancel(false); // withdraws the waiter; a grant that won the race is released by granted()
        }
        if (ending != null) {
            ending.lock.release();
        }
    }

    @Override
    public synchronized String toString() {
        return "Candidacy[" + identity + " in " + election.name() + ", "
                + (closed ? "closed" : term != null ? "leads" : "waits") + "]";
    }

    /** A term: the held lock on the election's key. */
    private final class CandidateTerm implements Term {
        final RemoteLock lock;
        boolean untold; // guarded by DefaultCandidacy.this: ended before its elected was told, so never told
        Thread tellingOn; // guarded by DefaultCandidacy.this: the thread telling its elected, while it does

        CandidateTerm(RemoteLock lock) {
            this.lock = lock;
        }

        @Override
        public String election() {
            return election.name();
        }

        @Override
        public String identity() {
            return identity;
        }

        @Override
        public OptionalLong epoch() {
            return lock.fencingToken();
        }

        @Override
        public boolean isCurrent() {
            synchronized (DefaultCandidacy.this) {
                return term == this && lock.isHeld();
            }
        }

        @Override
        public String toString() {
            return "Term[" + identity + " in " + election.name()
                    + lock.fencingToken().stream()
                            .mapToObj(e -> ", epoch " + e)
                            .findFirst()
                            .orElse("") + "]";
        }
    }
}
