package io.distlock.kit;

import io.distlock.Candidacy;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.Term;
import io.distlock.kit.history.HistoryEvent;
import io.distlock.kit.history.HistoryRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One candidate of the election contract: a candidacy and what its listener was told. Its belief that it leads runs
 * from the call of {@code elected} until it steps down or leaves (recorded before the call) or is told {@code
 * revoked}; an {@code elected} of the term it is stepping down from, told while the call is in progress, begins no
 * belief (the candidate has ended that term by calling). A belief is recorded as a hold of the election's key
 * ({@link HistoryEvent}s: acquired, releasing, lost) with the term's epoch as its token, so that the kit's {@link
 * io.distlock.kit.history.HistoryChecker} can check that no two beliefs overlap and that epochs grow. A belief that the
 * candidate ends while its term is no longer current (its lock's validity ran out: the store may have elected another
 * already) ends as lost, as a lock released after its lease ran out.
 *
 * <p>Under faults ({@link #joinUnderFaults}) a term can also end between its {@code elected} call and the belief's
 * record, as a lock between its grant and its record ({@code RandomOperations.recordIfHeld}): such a candidate records
 * a belief only for a term still current when it is told.
 */
final class Candidate implements LeadershipListener {

    private static final long PID = ProcessHandle.current().pid();

    private final String identity;
    private final String key;
    private final HistoryRecorder history;
    private final Candidacy candidacy;
    private final List<String> told = new ArrayList<>(); // guarded by this
    private final List<Long> toldAt = new ArrayList<>(); // guarded by this: System.nanoTime() of each call
    private Term believed; // guarded by this
    private String holder; // guarded by this: the believed term's name in the history
    private int terms; // guarded by this
    private Term rival; // guarded by this: another candidate's term, looked at when this one is elected
    private Boolean rivalCurrentWhenElected; // guarded by this: null until this one is elected with a rival set
    private Term ending; // guarded by this: the term a stepDown() or leave() in progress ends
    private final boolean onlyIfCurrent;
    private int toldNotCurrent; // guarded by this

    private Candidate(LeaderElection election, String identity, HistoryRecorder history, boolean onlyIfCurrent) {
        this.identity = identity;
        this.key = election.key();
        this.history = history;
        this.onlyIfCurrent = onlyIfCurrent;
        this.candidacy = election.join(identity, this);
    }

    /** Joins {@code election} as {@code identity}, recording its beliefs in {@code history}. */
    static Candidate join(LeaderElection election, String identity, HistoryRecorder history) {
        return new Candidate(election, identity, history, false);
    }

    /**
     * Joins as {@link #join} does, for a run under faults: a term no longer current when its {@code elected} is told
     * begins no belief (it is counted, {@link #toldNotCurrent()}).
     */
    static Candidate joinUnderFaults(LeaderElection election, String identity, HistoryRecorder history) {
        return new Candidate(election, identity, history, true);
    }

    /** How many {@code elected} calls came for a term no longer current, under faults. */
    synchronized int toldNotCurrent() {
        return toldNotCurrent;
    }

    String identity() {
        return identity;
    }

    Candidacy candidacy() {
        return candidacy;
    }

    /** The term its listener was told it leads, until it left or was told the term ended. */
    synchronized Optional<Term> believed() {
        return Optional.ofNullable(believed);
    }

    /** What its listener was told, in order: {@code elected} or {@code revoked <reason>}. */
    synchronized List<String> told() {
        return List.copyOf(told);
    }

    /**
     * When its listener was first told {@code what} (as in {@link #told()}), by {@link System#nanoTime()} at the
     * start of the call; empty if never.
     */
    synchronized OptionalLong firstToldAt(String what) {
        int index = told.indexOf(what);
        return index < 0 ? OptionalLong.empty() : OptionalLong.of(toldAt.get(index));
    }

    /**
     * Has this candidate's next {@code elected} call note whether {@code term}, another candidate's, was still current
     * then ({@link Term#isCurrent()}: its lock held by its holder's own reckoning).
     */
    synchronized void watchRival(Term term) {
        rival = term;
    }

    /** Whether the watched rival's term was still current when this one was elected; empty until then. */
    synchronized Optional<Boolean> rivalCurrentWhenElected() {
        return Optional.ofNullable(rivalCurrentWhenElected);
    }

    @Override
    public synchronized void elected(Term term) {
        if (rival != null && rivalCurrentWhenElected == null) {
            rivalCurrentWhenElected = rival.isCurrent(); // never under the rival candidacy's lock: no lock order
        }
        toldAt.add(System.nanoTime());
        told.add("elected");
        if (term == ending) {
            return; // told as the candidate was stepping down from it
        }
        if (onlyIfCurrent && !term.isCurrent()) {
            toldNotCurrent++;
            return;
        }
        believed = term;
        holder = identity + "#" + ++terms;
        record(HistoryEvent.Type.ACQUIRED, term);
    }

    @Override
    public synchronized void revoked(Term term, Reason reason) {
        toldAt.add(System.nanoTime());
        told.add("revoked " + reason);
        if (believed == term) {
            record(HistoryEvent.Type.LOST, term);
            believed = null;
        }
    }

    /** Steps down ({@link Candidacy#stepDown()}); a leader's belief ends just before. */
    boolean stepDown() {
        ending();
        try {
            return candidacy.stepDown();
        } finally {
            ended();
        }
    }

    /** Leaves the election; a leader's belief ends just before. */
    void leave() {
        ending();
        try {
            candidacy.close();
        } finally {
            ended();
        }
    }

    /**
     * The belief in the current term ends as the candidate calls to end it: released, or lost if the term is no longer
     * current.
     */
    private synchronized void ending() {
        ending = candidacy.currentTerm().orElse(null);
        if (believed != null) {
            record(believed.isCurrent() ? HistoryEvent.Type.RELEASING : HistoryEvent.Type.LOST, believed);
            believed = null;
        }
    }

    private synchronized void ended() {
        ending = null;
    }

    private void record(HistoryEvent.Type type, Term term) {
        history.record(new HistoryEvent(System.nanoTime(), type, key, term.epoch(), holder, PID));
    }

    @Override
    public String toString() {
        return identity + " (leads: " + candidacy.isLeader() + ", told " + told() + ")";
    }
}
