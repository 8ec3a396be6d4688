package io.distlock.internal;

import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LockerClosedException;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One observer of an election ({@link LeaderElection#observe}): reads who leads on a worker thread, now and then every
 * interval after the last read ended (the timer only hands the read over), and tells the consumer of the first answer
 * and of every change of leader (identity or epoch). A read that fails is logged and tried again; the locker's close ends the polling.
 */
final class LeaderPoll implements LeaderElection.Subscription {

    private static final Logger log = LoggerFactory.getLogger(LeaderPoll.class);

    private final LeaderElection election;
    private final Consumer<? super Optional<Leader>> onChange;
    private final SerialExecutor told;
    private final Duration interval;
    private final Elections parts;
    private volatile boolean closed;
    private volatile Future<?> next;
    /** The last answer told; read and written by one poll at a time. */
    private Optional<Leader> last;

    LeaderPoll(
            LeaderElection election,
            Consumer<? super Optional<Leader>> onChange,
            Executor executor,
            Duration interval,
            Elections parts) {
        this.election = election;
        this.onChange = onChange;
        this.told = new SerialExecutor(executor, "An observer of election '" + election.name() + "'");
        this.interval = interval;
        this.parts = parts;
    }

    /** Reads who leads now, on a worker. */
    void start() {
        runOnWorker();
    }

    private void poll() {
        if (closed) {
            return;
        }
        try {
            Optional<Leader> now = election.leader();
            if (last == null || !sameLeader(last, now)) {
                last = now;
                told.execute(() -> {
                    if (!closed) {
                        onChange.accept(now);
                    }
                });
            }
        } catch (LockerClosedException e) {
            closed = true;
            return;
        } catch (RuntimeException e) {
            log.warn(
                    "Could not read who leads election '{}'; reading again in {}",
                    election.name(),
                    DurationText.of(interval),
                    e);
        }
        if (!closed) {
            try {
                next = parts.scheduler().schedule(this::runOnWorker, interval.toNanos(), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException lockerClosed) {
                closed = true;
            }
        }
    }

    /**
     * Whether two answers name the same term: the same identity and epoch. Not the time since, which some stores
     * compute afresh at each read.
     */
    private static boolean sameLeader(Optional<Leader> a, Optional<Leader> b) {
        if (a.isEmpty() || b.isEmpty()) {
            return a.isEmpty() && b.isEmpty();
        }
        return a.get().identity().equals(b.get().identity())
                && a.get().epoch().equals(b.get().epoch());
    }

    private void runOnWorker() {
        try {
            parts.workers().execute(this::poll);
        } catch (RejectedExecutionException lockerClosed) {
            closed = true;
        }
    }

    @Override
    public void close() {
        closed = true;
        Future<?> scheduled = next;
        if (scheduled != null) {
            scheduled.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "Subscription[election " + election.name() + (closed ? ", closed" : "") + "]";
    }
}
