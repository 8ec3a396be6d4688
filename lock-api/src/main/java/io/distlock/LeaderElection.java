package io.distlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * An election by name, standing on the lock ({@link RemoteLocker#election(String)}): a candidate that holds the lock on
 * the election's {@linkplain #key() key} leads; its term lasts as long as that lock (renewed by the locker's lease,
 * like every lock), and its epoch is that lock's fencing token. So it works on every backend, with each backend's
 * guarantees for its lock: see the project's {@code docs/guarantees.md}. Cheap to obtain; asks the store nothing until
 * a candidate joins or the leader is asked for. Thread-safe.
 */
public interface LeaderElection {

    /** How an election's name maps to the key of its lock: this prefix, then the name. */
    String KEY_PREFIX = "%election/";

    /** A subscription to the changes of leader ({@link #observe}); closing it stops the polling. */
    interface Subscription extends AutoCloseable {
        /** Stops telling of changes; idempotent. */
        @Override
        void close();
    }

    /** The election's name. */
    String name();

    /**
     * The key of the election's lock: {@link #KEY_PREFIX} followed by the name. Lock keys starting with {@code
     * %election/} are the elections': a lock taken on one by hand takes part in the election (and leads while held).
     */
    String key();

    /**
     * Joins the election as a candidate known as {@code identity}: what {@link #leader()} shows to everyone while it
     * leads, so choose what followers need to reach it ({@code host:port}, a URL). Returns at once; the candidate waits
     * for the election's lock as {@link RemoteLocker#lockAsync} does (without holding a thread where the backend waits
     * natively), and {@code listener} is told on the locker's listener executor ({@link
     * RemoteLockerBuilder#listenerExecutor}).
     *
     * @param identity stored with the election's lock entry as its owner label: not blank, at most {@value
     *     io.distlock.toolkit.OwnerIds#MAX_LABEL_BYTES} bytes in UTF-8, no control characters
     * @throws NullPointerException if {@code identity} or {@code listener} is null
     * @throws IllegalArgumentException if {@code identity} is blank, too long or holds a control character
     * @throws LockerClosedException if the locker is closed
     */
    Candidacy join(String identity, LeadershipListener listener);

    /**
     * Joins as {@link #join(String, LeadershipListener)} does, with {@code listener} told on {@code executor}, one call
     * at a time and in order.
     */
    Candidacy join(String identity, LeadershipListener listener, Executor executor);

    /**
     * Who leads now, read from the store (the holder of the election's lock, through {@link RemoteLocker#inspect}):
     * what anyone may ask, candidate or not. One or a few store reads.
     *
     * @return the leader with its identity and, as the store has them, its epoch and since when; empty when nobody
     *     leads
     * @throws UnsupportedOperationException if the backend offers no inspection ({@link Capabilities#operations()})
     * @throws LockBackendException if the store could not be asked
     * @throws LockerClosedException if the locker is closed
     */
    Optional<Leader> leader();

    /**
     * Tells {@code onChange} who leads, first as of now and then on every change of leader (another identity or
     * epoch), on the locker's listener executor, without joining. Polls {@link #leader()} every second: a change is
     * seen within that interval, and may be missed altogether if two terms came and went within it (or, where there is
     * no epoch, if the same identity leads again). A read that fails is logged and tried again.
     *
     * @return the subscription; close it to stop polling (closing the locker stops it too)
     * @throws UnsupportedOperationException if the backend offers no inspection
     * @throws LockerClosedException if the locker is closed
     */
    Subscription observe(Consumer<? super Optional<Leader>> onChange);

    /**
     * Tells {@code onChange} who leads as {@link #observe(Consumer)} does, on {@code executor}, polling every {@code
     * pollInterval}.
     *
     * @throws IllegalArgumentException if {@code pollInterval} is zero or negative
     */
    Subscription observe(Consumer<? super Optional<Leader>> onChange, Executor executor, Duration pollInterval);
}
