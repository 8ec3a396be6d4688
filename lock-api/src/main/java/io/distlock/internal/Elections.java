package io.distlock.internal;

import io.distlock.Capabilities;
import io.distlock.Capabilities.Operation;
import io.distlock.LeaderElection;
import io.distlock.LockState;
import io.distlock.toolkit.ShownText;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;

/**
 * The parts of a locker its elections use, and its open candidacies, which the locker's close ends. Built by the
 * locker; hands out {@link DefaultLeaderElection}s.
 *
 * @param backendName the backend's name, for messages
 * @param capabilities what the backend offers
 * @param async where candidates wait for the election's lock
 * @param inspect the locker's {@code inspect}: who holds a key, read from the store
 * @param waiters the locker's open-or-closed state
 * @param listeners the locker's listener executor: where candidates and observers are told by default
 * @param workers the locker's pool for blocking work: where losses are handled and the leader is read
 * @param scheduler the locker's timer, which only hands polls to the workers
 * @param leaseTime the locker's lease, by which a term's lock is renewed
 * @param candidacies the open candidacies
 */
record Elections(
        String backendName,
        Capabilities capabilities,
        AsyncAcquirer async,
        Function<String, LockState> inspect,
        Waiters waiters,
        Executor listeners,
        Executor workers,
        ScheduledExecutorService scheduler,
        Duration leaseTime,
        Set<DefaultCandidacy> candidacies) {

    /** The parts of a locker, with no candidacy yet. */
    static Elections of(
            String backendName,
            Capabilities capabilities,
            AsyncAcquirer async,
            Function<String, LockState> inspect,
            Waiters waiters,
            Executor listeners,
            Executor workers,
            ScheduledExecutorService scheduler,
            Duration leaseTime) {
        return new Elections(
                backendName,
                capabilities,
                async,
                inspect,
                waiters,
                listeners,
                workers,
                scheduler,
                leaseTime,
                ConcurrentHashMap.newKeySet());
    }

    /** The election named {@code name}, checked as a key once prefixed. */
    LeaderElection election(String name) {
        Objects.requireNonNull(name, "Election name must not be null");
        if (name.isBlank()) {
            throw new IllegalArgumentException("Election name must not be blank, got '" + ShownText.of(name) + "'");
        }
        String key;
        try {
            key = Checks.key(LeaderElection.KEY_PREFIX + name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Election name is not valid: the election is the lock on '" + LeaderElection.KEY_PREFIX
                            + "' followed by its name, and " + e.getMessage(),
                    e);
        }
        waiters.ensureOpen();
        return new DefaultLeaderElection(this, name, key);
    }

    /**
     * Why leader() and observe() cannot answer on this backend; empty if they can.
     */
    Optional<String> noInspection() {
        return capabilities.offers(Operation.INSPECT)
                ? Optional.empty()
                : Optional.of("the " + backendName + " backend offers no inspection (it offers "
                        + capabilities.operations() + "), through which an election's leader is read from the store");
    }

    /** The locker closes: every open candidacy leaves, its leader told {@code LOCKER_CLOSED}. */
    void lockerClosed() {
        List.copyOf(candidacies).forEach(DefaultCandidacy::lockerClosed);
    }
}
