package io.distlock.internal;

import io.distlock.Candidacy;
import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.toolkit.OwnerIds;
import io.distlock.toolkit.ShownText;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * An election on a locker: candidates are {@link DefaultCandidacy}s waiting for the lock on the election's key, the
 * leader is read back as that key's holder, observers are {@link LeaderPoll}s. Holds nothing but its name.
 */
final class DefaultLeaderElection implements LeaderElection {

    /** How often an observer reads who leads, unless it says otherwise. */
    static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

    private final Elections parts;
    private final String name;
    private final String key;

    DefaultLeaderElection(Elections parts, String name, String key) {
        this.parts = parts;
        this.name = name;
        this.key = key;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public Candidacy join(String identity, LeadershipListener listener) {
        return join(identity, listener, parts.listeners());
    }

    @Override
    public Candidacy join(String identity, LeadershipListener listener, Executor executor) {
        Objects.requireNonNull(identity, "Candidate identity must not be null");
        try {
            OwnerIds.checkLabel(identity);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Candidate identity '" + ShownText.of(identity)
                            + "' cannot be stored as the owner label of election '" + name + "': " + e.getMessage(),
                    e);
        }
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(executor, "executor");
        parts.waiters().ensureOpen();
        DefaultCandidacy candidacy = new DefaultCandidacy(parts, this, identity, listener, executor);
        parts.candidacies().add(candidacy);
        candidacy.queue();
        return candidacy;
    }

    @Override
    public Optional<Leader> leader() {
        parts.waiters().ensureOpen();
        requireInspection();
        LockState state = parts.inspect().apply(key);
        return state.holders().stream()
                .filter(h -> h.kind() == LockKind.LOCK)
                .findFirst()
                .map(h -> new Leader(h.ownerLabel(), h.fencingToken(), h.since()));
    }

    @Override
    public Subscription observe(Consumer<? super Optional<Leader>> onChange) {
        return observe(onChange, parts.listeners(), DEFAULT_POLL_INTERVAL);
    }

    @Override
    public Subscription observe(Consumer<? super Optional<Leader>> onChange, Executor executor, Duration pollInterval) {
        Objects.requireNonNull(onChange, "onChange");
        Objects.requireNonNull(executor, "executor");
        Checks.positive(pollInterval, "pollInterval");
        parts.waiters().ensureOpen();
        requireInspection();
        LeaderPoll poll = new LeaderPoll(this, onChange, executor, pollInterval, parts);
        poll.start();
        return poll;
    }

    private void requireInspection() {
        parts.noInspection().ifPresent(why -> {
            throw new UnsupportedOperationException("Election '" + name + "' cannot say who leads: " + why);
        });
    }

    @Override
    public String toString() {
        return "LeaderElection[" + name + "]";
    }
}
