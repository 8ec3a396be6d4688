package io.distlock.spring;

import io.distlock.Candidacy;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.RemoteLocker;
import io.distlock.Term;
import io.distlock.toolkit.OwnerIds;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.LeaderEventPublisher;

/**
 * Spring Integration's leader initiator on a distlock {@link LeaderElection}: the {@link Candidate} leads while it holds
 * the election's lock, and is told as with Spring's own initiators ({@code LockRegistryLeaderInitiator} and the like):
 * {@link Candidate#onGranted} and an {@code OnGrantedEvent} when a term begins, {@link Candidate#onRevoked} and an
 * {@code OnRevokedEvent} when it ends, each with an {@link ElectionContext} that carries the term and its {@linkplain
 * ElectionContext#epoch() epoch} for fencing the leader's writes.
 *
 * <p>Unlike {@code LockRegistryLeaderInitiator}, nothing polls: the candidate waits for the election's lock as {@link
 * RemoteLocker#lockAsync} does, and hears of a grant or a loss from the locker. {@link #start()} joins the election
 * ({@link LeaderElection#join}); {@link #stop()} leaves it, which releases the lock at once, so the next candidate is
 * granted without waiting for a lease to run out. {@link ElectionContext#yield()} steps down and queues again.
 *
 * <p>The candidate and the event publisher are called one at a time and in order, grant before the revocation of the
 * same term, on the locker's listener executor or the one given to {@link #setTaskExecutor}: never on a thread that
 * keeps the locker's time, nor on the thread that calls {@link #start()} or {@link #stop()}. A term that {@link
 * #stop()} ends before its {@code onGranted} began is never told (neither call, no event); {@link #stop()} waits for an
 * {@code onGranted} in progress to return, and the revocation may be told after it returned. When {@code onGranted}
 * throws, the candidate steps down (and hears {@code onRevoked}) as with Spring's {@code
 * LockRegistryLeaderInitiator}, and no {@code OnGrantedEvent} is published for that term. No {@code
 * OnFailedToAcquireEvent} is published: a candidate whose wait failed in the store logs it and asks again by itself.
 *
 * <p>Events go to the {@link LeaderEventPublisher} given to {@link #setLeaderEventPublisher}, else to a {@link
 * DefaultLeaderEventPublisher} on the application's event publisher (set by Spring), else nowhere. Their source is
 * this initiator and their role the election's name. Starts with its application context ({@link #isAutoStartup()}) in
 * the same late phase as Spring's initiators ({@value #DEFAULT_PHASE}). Thread-safe; may be started again after a
 * stop (it joins anew).
 */
public class DistlockLeaderInitiator implements SmartLifecycle, ApplicationEventPublisherAware {

    /** The lifecycle phase by default: that of Spring Integration's initiators, {@code Integer.MAX_VALUE - 1000}. */
    public static final int DEFAULT_PHASE = Integer.MAX_VALUE - 1000;

    private static final Logger log = LoggerFactory.getLogger(DistlockLeaderInitiator.class);

    private final LeaderElection election;
    private final Candidate candidate;
    private final String identity;
    private final ElectionContext context = new CandidateContext();

    private volatile Executor executor;
    private volatile LeaderEventPublisher leaderEventPublisher;
    private volatile ApplicationEventPublisher applicationEventPublisher;
    private volatile boolean autoStartup = true;
    private volatile int phase = DEFAULT_PHASE;

    private Candidacy candidacy; // guarded by this

    /**
     * An initiator of {@code candidate} in the election of {@code locker} named by the candidate's role, known there by
     * the candidate's id.
     *
     * @throws IllegalArgumentException if the role is not a valid election name, or the id cannot be an owner label
     *     (see {@link LeaderElection#join})
     */
    public DistlockLeaderInitiator(RemoteLocker locker, Candidate candidate) {
        this(
                Objects.requireNonNull(locker, "locker")
                        .election(Objects.requireNonNull(candidate, "candidate").getRole()),
                candidate);
    }

    /**
     * An initiator of {@code candidate} in {@code election}, known there by the candidate's id. The election's name is
     * the role of the events and of the context, whatever the candidate's role.
     *
     * @throws IllegalArgumentException if the candidate's id cannot be an owner label (see {@link LeaderElection#join})
     */
    public DistlockLeaderInitiator(LeaderElection election, Candidate candidate) {
        this(election, candidate, Objects.requireNonNull(candidate, "candidate").getId());
    }

    /**
     * An initiator of {@code candidate} in {@code election}, known there by {@code identity}: what {@link
     * LeaderElection#leader()} shows while it leads (a host and port, a URL, the locker's owner label).
     *
     * @throws IllegalArgumentException if {@code identity} is blank, longer than {@value OwnerIds#MAX_LABEL_BYTES} bytes
     *     in UTF-8 or holds a control character
     */
    public DistlockLeaderInitiator(LeaderElection election, Candidate candidate, String identity) {
        this.election = Objects.requireNonNull(election, "election");
        this.candidate = Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(identity, "identity");
        try {
            OwnerIds.checkLabel(identity);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Leader identity '" + identity + "' in election '" + election.name() + "' is not valid: "
                            + e.getMessage(),
                    e);
        }
        this.identity = identity;
    }

    /** The election this initiator's candidate joins. */
    public LeaderElection getElection() {
        return election;
    }

    /** The identity the candidate joins with. */
    public String getIdentity() {
        return identity;
    }

    /**
     * Where the candidate and the event publisher are called (by default, on the locker's listener executor). Takes
     * effect at the next {@link #start()}.
     */
    public void setTaskExecutor(Executor executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /** Where the events go, instead of the application's event publisher. Takes effect at the next {@link #start()}. */
    public void setLeaderEventPublisher(LeaderEventPublisher leaderEventPublisher) {
        this.leaderEventPublisher = Objects.requireNonNull(leaderEventPublisher, "leaderEventPublisher");
    }

    /** Set by Spring: the events go there, unless a {@link LeaderEventPublisher} was given. */
    @Override
    public void setApplicationEventPublisher(ApplicationEventPublisher applicationEventPublisher) {
        this.applicationEventPublisher = applicationEventPublisher;
    }

    /** Whether the initiator starts with its application context; true by default. */
    @Override
    public boolean isAutoStartup() {
        return autoStartup;
    }

    /** Sets whether the initiator starts with its application context. */
    public void setAutoStartup(boolean autoStartup) {
        this.autoStartup = autoStartup;
    }

    /** The lifecycle phase; {@link #DEFAULT_PHASE} unless set. */
    @Override
    public int getPhase() {
        return phase;
    }

    /** Sets the lifecycle phase. */
    public void setPhase(int phase) {
        this.phase = phase;
    }

    /**
     * The candidate's context as of each call: {@link ElectionContext#isLeader()} whether it leads now, {@link
     * ElectionContext#term()} its current term, {@link ElectionContext#yield()} steps the current term down. Not
     * leading while stopped.
     */
    public ElectionContext getContext() {
        return context;
    }

    /**
     * Joins the election, unless joined already. Returns at once; the grant is told on the executor.
     *
     * @throws io.distlock.LockerClosedException if the locker is closed
     */
    @Override
    public void start() {
        synchronized (this) {
            if (candidacy != null) {
                return;
            }
            Told told = new Told(publisher());
            Executor given = executor;
            // The listener never runs on this thread; one that steps down waits here for the candidacy to be set.
            candidacy = given == null ? election.join(identity, told) : election.join(identity, told, given);
        }
        log.debug("'{}' joined election '{}'", identity, election.name());
    }

    private LeaderEventPublisher publisher() {
        LeaderEventPublisher given = leaderEventPublisher;
        if (given != null) {
            return given;
        }
        ApplicationEventPublisher application = applicationEventPublisher;
        return application == null ? null : new DefaultLeaderEventPublisher(application);
    }

    /**
     * Leaves the election, unless stopped already: a leader releases the election's lock at once, and is told {@code
     * onRevoked} on the executor (maybe after this returns). Blocks for the release's round trip to the store.
     */
    @Override
    public void stop() {
        Candidacy leaving;
        synchronized (this) {
            leaving = candidacy;
            candidacy = null;
        }
        if (leaving != null) {
            leaving.close();
            log.debug("'{}' left election '{}'", identity, election.name());
        }
    }

    /** Whether the initiator is started (joined and not stopped). */
    @Override
    public synchronized boolean isRunning() {
        return candidacy != null;
    }

    private synchronized Optional<Candidacy> candidacy() {
        return Optional.ofNullable(candidacy);
    }

    /** Steps {@code term} down if it is still the joined candidacy's current term, and never a later one. */
    private void stepDown(Term term) {
        candidacy().ifPresent(current -> {
            try {
                current.stepDown(term);
            } catch (IllegalStateException stopped) {
                // stopped meanwhile, which ended the term
            }
        });
    }

    @Override
    public String toString() {
        return "DistlockLeaderInitiator[" + identity + " in " + election.name() + ", "
                + candidacy().map(c -> c.isLeader() ? "leads" : "waits").orElse("stopped") + "]";
    }

    /** Tells the candidate and the publisher of one candidacy's terms; called one at a time, in order. */
    private final class Told implements LeadershipListener {
        private final LeaderEventPublisher publisher;
        private TermContext current; // confined to the serial calls

        Told(LeaderEventPublisher publisher) {
            this.publisher = publisher;
        }

        @Override
        public void elected(Term term) {
            TermContext granted = new TermContext(term);
            current = granted;
            try {
                candidate.onGranted(granted);
            } catch (InterruptedException e) {
                refused(granted, e);
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                refused(granted, e);
                return;
            }
            if (publisher != null) {
                publisher.publishOnGranted(DistlockLeaderInitiator.this, granted, election.name());
            }
        }

        private void refused(TermContext granted, Exception e) {
            log.warn(
                    "Candidate '{}' of election '{}' failed to take up leadership; stepping down",
                    identity,
                    election.name(),
                    e);
            granted.yield();
        }

        @Override
        public void revoked(Term term, Reason reason) {
            TermContext revoked = current != null && current.term == term ? current : new TermContext(term);
            current = null;
            try {
                candidate.onRevoked(revoked);
            } catch (RuntimeException e) {
                log.warn(
                        "Candidate '{}' of election '{}' threw on revocation ({})",
                        identity,
                        election.name(),
                        reason,
                        e);
            }
            if (publisher != null) {
                publisher.publishOnRevoked(DistlockLeaderInitiator.this, revoked, election.name());
            }
        }
    }

    /** The context of one term. */
    private final class TermContext implements ElectionContext {
        final Term term;

        TermContext(Term term) {
            this.term = term;
        }

        @Override
        public boolean isLeader() {
            return term.isCurrent();
        }

        @Override
        public String getRole() {
            return election.name();
        }

        @Override
        public void yield() {
            stepDown(term);
        }

        @Override
        public Optional<Term> term() {
            return Optional.of(term);
        }

        @Override
        public String toString() {
            return "ElectionContext[" + term + (term.isCurrent() ? ", current" : ", ended") + "]";
        }
    }

    /** The context of the candidate, whatever its term. */
    private final class CandidateContext implements ElectionContext {

        @Override
        public boolean isLeader() {
            return candidacy().map(Candidacy::isLeader).orElse(false);
        }

        @Override
        public String getRole() {
            return election.name();
        }

        @Override
        public void yield() {
            candidacy().flatMap(Candidacy::currentTerm).ifPresent(DistlockLeaderInitiator.this::stepDown);
        }

        @Override
        public Optional<Term> term() {
            return candidacy().flatMap(Candidacy::currentTerm);
        }

        @Override
        public String toString() {
            return "ElectionContext[" + DistlockLeaderInitiator.this + "]";
        }
    }
}
