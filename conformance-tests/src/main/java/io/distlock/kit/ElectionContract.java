package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Candidacy;
import io.distlock.Capabilities;
import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.LeaseModel;
import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Term;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryEvent;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Elections ({@link LeaderElection}), which stand on the lock and so run on every backend; tested where the leader
 * can be read back ({@link Need#ELECTION}): one leader at a time as leadership passes around, each term's epoch
 * greater than the last where the backend fences; a leader that leaves hands over at once; anyone can see who leads
 * without joining; a leader whose lock is lost is told and the next candidate leads; a leader killed in another
 * process is followed within the bound for a crashed holder ({@link Need#OTHER_PROCESSES}); a leader cut off from the
 * store is told it lost leadership before the next term starts ({@link Need#CLIENT_PARTITION}); the blocking wait;
 * bad input.
 */
public interface ElectionContract extends LockerFixture {

    /** How many times leadership is handed over by closing the leader. */
    int HANDOVERS = 5;

    /** A listener that is told nothing the test needs. */
    LeadershipListener IGNORING = LeadershipListener.of(term -> {}, (term, reason) -> {});

    /**
     * Waits until exactly one of {@code candidates} believes it leads (its listener was told {@code elected}) and its
     * candidacy says so too; fails if two ever believe it at once while waiting.
     */
    private Candidate oneLeader(List<Candidate> candidates, Duration within) {
        AtomicReference<Candidate> leader = new AtomicReference<>();
        Deadlines.await(
                () -> {
                    List<Candidate> believing = candidates.stream()
                            .filter(c -> c.believed().isPresent())
                            .toList();
                    assertTrue(believing.size() <= 1, () -> "two candidates believe they lead: " + believing);
                    if (believing.size() == 1 && believing.get(0).candidacy().isLeader()) {
                        leader.set(believing.get(0));
                        return true;
                    }
                    return false;
                },
                within,
                () -> "no single leader among " + candidates);
        return leader.get();
    }

    /**
     * One leader at a time: three candidates on three lockers; five times the leader leaves and a new candidate joins
     * in its place. Each candidate's belief that it leads (from {@code elected} until it leaves or is told {@code
     * revoked}) overlaps no other's, and each term's epoch is greater than the last where the backend fences (present
     * exactly then).
     */
    @Test
    @Requires(Need.ELECTION)
    default void election_hasOneLeaderAtATime_asLeadershipPassesAround() throws Exception {
        String name = TestKeys.unique("election-one-leader");
        HistoryRecorder history = HistoryRecorder.inMemory();
        boolean fencing;
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            fencing = lockers.get(0).capabilities().fencing();
            List<Candidate> candidates = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                candidates.add(Candidate.join(lockers.get(i).election(name), "kit-" + i + "-0", history));
            }
            try {
                for (int round = 1; round <= HANDOVERS; round++) {
                    Candidate leader = oneLeader(candidates, maxWait());
                    int seat = candidates.indexOf(leader);
                    leader.leave();
                    candidates.set(
                            seat,
                            Candidate.join(lockers.get(seat).election(name), "kit-" + seat + "-" + round, history));
                }
                oneLeader(candidates, maxWait());
            } finally {
                candidates.forEach(Candidate::leave);
            }
        }
        List<HistoryEvent> events = history.events();
        HistoryChecker.assertConsistent(events);
        List<OptionalLong> epochs = events.stream()
                .filter(e -> e.type() == HistoryEvent.Type.ACQUIRED)
                .map(HistoryEvent::token)
                .toList();
        // and perhaps more: as the last candidates leave, the ones still there may be elected first
        assertTrue(epochs.size() >= HANDOVERS + 1, "terms begun: " + events);
        for (int i = 0; i < epochs.size(); i++) {
            assertEquals(fencing, epochs.get(i).isPresent(), "an epoch where the backend fences, none elsewhere");
            if (fencing && i > 0) {
                assertTrue(
                        epochs.get(i).getAsLong() > epochs.get(i - 1).getAsLong(),
                        "epochs in the order of the terms: " + epochs);
            }
        }
    }

    /**
     * A leader that leaves hands over at once: the candidate waiting behind it leads well before the leaver's lease
     * could have run out (half the fixture's lease time), and the store then shows it as the leader with a greater
     * epoch where the backend fences.
     */
    @Test
    @Requires(Need.ELECTION)
    default void close_handsLeadershipToTheNextCandidate_atOnce() throws Exception {
        String name = TestKeys.unique("election-handover");
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            Candidate first = Candidate.join(lockers.get(0).election(name), "kit-first", history);
            assertTrue(first.candidacy().awaitLeadership(maxWait()), "the first candidate never led");
            Candidate next = Candidate.join(lockers.get(1).election(name), "kit-next", history);
            try {
                Term firstTerm = first.candidacy().currentTerm().orElseThrow();
                assertFalse(next.candidacy().isLeader(), "two leaders");
                Duration bound = leaseTime().dividedBy(2);
                long start = System.nanoTime();
                first.leave();
                assertTrue(next.candidacy().awaitLeadership(maxWait()), "the next candidate never led");
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertTrue(
                        took.compareTo(bound) < 0,
                        "the next candidate led " + took.toMillis() + " ms after the leader left; expected within "
                                + bound.toMillis() + " ms (half the lease time: a leaver hands over at once)");
                Leader shown = lockers.get(0).election(name).leader().orElseThrow();
                assertEquals("kit-next", shown.identity(), "the leader the store shows");
                Term nextTerm = next.candidacy().currentTerm().orElseThrow();
                assertEquals(nextTerm.epoch(), shown.epoch(), "the epoch the store shows");
                if (firstTerm.epoch().isPresent()) {
                    assertTrue(
                            nextTerm.epoch().getAsLong() > firstTerm.epoch().getAsLong(),
                            "epochs " + firstTerm.epoch() + " then " + nextTerm.epoch());
                }
            } finally {
                next.leave();
            }
        }
    }

    /**
     * Stepping down hands leadership on and queues again. Three candidates join in turn (each once the one before is
     * queued); the leader steps down three times. On a fair backend the candidates lead in the order they joined, the
     * one that stepped down behind the others (a, b, c, then a again), and the store shows each; elsewhere one
     * candidate leads after each step-down, whichever the store chose (perhaps the one that stepped down). No two
     * beliefs overlap.
     */
    @Test
    @Requires(Need.ELECTION)
    default void stepDown_handsLeadershipOn_inArrivalOrderOnAFairBackend() throws Exception {
        String name = TestKeys.unique("election-step-down");
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            boolean fair = lockers.get(0).capabilities().fair();
            LeaderElection observed = lockers.get(0).election(name);
            List<Candidate> candidates = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    candidates.add(Candidate.join(lockers.get(i).election(name), "kit-" + (char) ('a' + i), history));
                    if (i == 0) {
                        assertTrue(candidates.get(0).candidacy().awaitLeadership(maxWait()), "the first never led");
                    } else {
                        awaitQueued(lockers.get(0), observed.key(), i);
                    }
                }
                Candidate leader = candidates.get(0);
                for (int round = 1; round <= 3; round++) {
                    assertTrue(leader.stepDown(), "the leader " + leader + " could not step down");
                    Candidate next = oneLeader(candidates, maxWait());
                    if (fair) {
                        Candidate expected = candidates.get(round % 3);
                        assertEquals(
                                expected.identity(),
                                next.identity(),
                                "round " + round + ": after " + leader.identity()
                                        + " stepped down, leadership goes to the candidate that joined next");
                        Term term = next.candidacy().currentTerm().orElseThrow();
                        Deadlines.await(
                                () -> shows(observed.leader(), expected.identity(), term.epoch()),
                                maxWait(),
                                () -> "the store shows " + observed.leader() + ", not " + expected.identity());
                        awaitQueued(lockers.get(0), observed.key(), 2); // the one that stepped down queued again
                    }
                    leader = next;
                }
            } finally {
                candidates.forEach(Candidate::leave);
            }
        }
        HistoryChecker.assertConsistent(history.events());
    }

    /**
     * Anyone can see who leads without joining: a locker that is no candidate observes the election (told first that
     * nobody leads, then each new leader) and reads the leader; both agree with the candidates on identity and epoch,
     * before and after the leader leaves.
     */
    @Test
    @Requires(Need.ELECTION)
    default void observeAndLeader_agreeWithTheCandidates_withoutJoining() throws Exception {
        String name = TestKeys.unique("election-observed");
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            LeaderElection observed = lockers.get(2).election(name);
            List<Optional<Leader>> seen = java.util.Collections.synchronizedList(new ArrayList<>());
            try (LeaderElection.Subscription subscription =
                    observed.observe(seen::add, Runnable::run, TestTimeouts.scaled(Duration.ofMillis(50)))) {
                Deadlines.await(() -> !seen.isEmpty(), maxWait(), () -> "the observer was never told");
                assertEquals(Optional.empty(), seen.get(0), "the first answer, before any candidate joined");
                List<Candidate> candidates = new ArrayList<>();
                candidates.add(Candidate.join(lockers.get(0).election(name), "kit-a", history));
                candidates.add(Candidate.join(lockers.get(1).election(name), "kit-b", history));
                try {
                    for (int round = 0; round < 2; round++) {
                        Candidate leader = oneLeader(candidates, maxWait());
                        Term term = leader.candidacy().currentTerm().orElseThrow();
                        Deadlines.await(
                                () -> shows(seen.get(seen.size() - 1), leader.identity(), term.epoch()),
                                maxWait(),
                                () -> "the observer does not see " + leader + " with epoch " + term.epoch()
                                        + ": it saw " + seen);
                        assertTrue(
                                shows(observed.leader(), leader.identity(), term.epoch()),
                                "leader() of a locker that is no candidate: " + observed.leader() + ", expected "
                                        + leader.identity() + " with epoch " + term.epoch());
                        leader.leave();
                        candidates.remove(leader);
                    }
                    Deadlines.await(
                            () -> seen.get(seen.size() - 1).isEmpty(),
                            maxWait(),
                            () -> "the observer does not see that nobody leads: it saw " + seen);
                } finally {
                    candidates.forEach(Candidate::leave);
                }
            }
        }
    }

    /**
     * Waits until the store shows a candidate queued on the election's {@code key} behind its leader, where it counts
     * waiters ({@link io.distlock.LockState#waiting()}; where it does not, at once).
     */
    private void awaitQueued(RemoteLocker locker, String key) {
        awaitQueued(locker, key, 1);
    }

    /** Waits until {@code waiting} candidates are queued for {@code key}, where the store counts its queue. */
    private void awaitQueued(RemoteLocker locker, String key, int waiting) {
        Deadlines.await(
                () -> locker.inspect(key).waiting().orElse(waiting) >= waiting,
                maxWait(),
                () -> waiting + " candidates that do not lead are not queued: " + locker.inspect(key));
    }

    private static boolean shows(Optional<Leader> leader, String identity, OptionalLong epoch) {
        return leader.isPresent()
                && leader.get().identity().equals(identity)
                && leader.get().epoch().equals(epoch);
    }

    /**
     * A leader whose lock is lost (its entry deleted behind its back: broken with {@link RemoteLocker#breakLock} where
     * the backend can, which leaves the waiters queued, else {@link StoreFaults#deleteLockEntry}) is told {@code
     * revoked} with {@code LOST} within the bound for a deleted entry, and a candidate leads again in a new term, with a
     * greater epoch where the backend fences: on a fair backend whose lock was broken, the one that waited behind it.
     */
    @Test
    @Requires({Need.ELECTION, Need.ENTRY_DELETION})
    default void aLeaderWhoseLockIsLost_isToldSo_andTheNextCandidateLeads() throws Exception {
        String name = TestKeys.unique("election-lost");
        Optional<StoreFaults> faults = storeFaults();
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (Lockers lockers = Lockers.open(this, 3, shortLeaseTime())) {
            RemoteLocker admin = lockers.get(2);
            Capabilities capabilities = admin.capabilities();
            boolean breaks = capabilities.offers(Capabilities.Operation.BREAK);
            Duration bound = TestTimeouts.scaled(
                            faults.map(StoreFaults::deletionNoticedWithin).orElse(shortLeaseTime()))
                    .plus(expirySlack());
            String key = admin.election(name).key();
            Candidate first = Candidate.join(lockers.get(0).election(name), "kit-first", history);
            Candidate next = Candidate.join(lockers.get(1).election(name), "kit-next", history);
            try {
                Candidate leader = oneLeader(List.of(first, next), maxWait());
                Candidate other = leader == first ? next : first;
                OptionalLong deposed = leader.believed().orElseThrow().epoch();
                awaitQueued(admin, key);
                if (breaks) {
                    assertEquals(1, admin.breakLock(key).size(), "the leader's entry broken");
                } else {
                    faults.orElseThrow().deleteLockEntry(key);
                }
                long start = System.nanoTime();
                Deadlines.await(
                        () -> leader.told().contains("revoked LOST"),
                        bound,
                        () -> "the leader whose entry was deleted was not told: " + leader);
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                Candidate successor = oneLeader(List.of(first, next), maxWait());
                OptionalLong epoch = successor.believed().orElseThrow().epoch();
                if (deposed.isPresent()) {
                    assertTrue(
                            epoch.getAsLong() > deposed.getAsLong(),
                            "the epoch after the loss " + epoch + ", before " + deposed);
                }
                if (breaks && capabilities.fair()) {
                    assertEquals(
                            other,
                            successor,
                            "the candidate that waited leads (the deposed leader was told after " + took.toMillis()
                                    + " ms)");
                }
            } finally {
                first.leave();
                next.leave();
            }
        }
    }

    /**
     * A leader killed with {@code SIGKILL} in another process (no step-down, no release: a crash) is followed by the
     * candidate of this JVM queued behind it within the bound for a crashed holder ({@code Lockers.freedWithin}: the
     * worker's lease, or the session timeout, plus the store's expiry slack), the same bound as for the lock of a
     * killed holder ({@link MultiProcessContract}); with a greater epoch where the backend fences. The time it took is
     * logged.
     */
    @Test
    @Requires({Need.ELECTION, Need.OTHER_PROCESSES})
    default void aLeaderKilledInAnotherProcess_isFollowedWithinTheBoundForACrashedHolder() throws Exception {
        String name = TestKeys.unique("election-killed");
        String uri = multiProcessSupport().workerUri().orElseThrow(); // checked by @Requires(Need.OTHER_PROCESSES)
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (Workers workers = Workers.create(uri, shortLeaseTime(), maxWait());
                RemoteLocker locker = openLocker(leaseTime())) {
            Worker worker = workers.start(
                    "candidate", name, 1, 1, Duration.ofMinutes(10).toMillis(), Map.of("identity", "kit-worker"));
            String elected =
                    Workers.awaitLine(worker, "ELECTED", Workers.startup().plus(maxWait()));
            String workerEpoch = elected.split(" ")[2];
            LeaderElection election = locker.election(name);
            Candidate next = Candidate.join(election, "kit-next", history);
            try {
                awaitQueued(locker, election.key());
                assertFalse(next.candidacy().isLeader(), "two leaders: " + next + " and " + worker.describe());
                assertEquals(
                        "kit-worker",
                        election.leader().map(Leader::identity).orElse("nobody"),
                        "the leader the store shows");
                Duration bound = Lockers.freedWithin(this, model);
                long killed = System.nanoTime();
                worker.kill();
                Deadlines.await(
                        () -> next.firstToldAt("elected").isPresent(),
                        bound.plus(maxWait()),
                        () -> "the candidate behind a leader killed in another process never led: " + next);
                Duration took = Duration.ofNanos(next.firstToldAt("elected").getAsLong() - killed);
                log().info(
                                "The candidate queued behind a leader killed in another process led {} ms after the"
                                        + " kill (bound {} ms: {} plus expiry slack)",
                                took.toMillis(),
                                bound.toMillis(),
                                model == LeaseModel.SESSION ? "session timeout" : "lease");
                assertTrue(
                        took.compareTo(bound) <= 0,
                        "the candidate behind a leader killed in another process led " + took.toMillis() + " ms after"
                                + " the kill; expected within " + bound.toMillis() + " ms (the "
                                + (model == LeaseModel.SESSION ? "session timeout" : "lease")
                                + " plus the store's expiry slack, as for the lock of a crashed holder)");
                if (!workerEpoch.equals("-")) {
                    long epoch = next.believed().orElseThrow().epoch().getAsLong();
                    assertTrue(
                            epoch > Long.parseLong(workerEpoch),
                            "the epoch after the crash " + epoch + ", the killed leader's " + workerEpoch);
                }
            } finally {
                next.leave();
            }
        }
    }

    /**
     * A leader cut off from the store (its locker's proxies swallow everything) no longer leads by its own reckoning
     * ({@link Term#isCurrent()} false) when the candidate of an unpartitioned locker, queued behind it, is told it is
     * elected, and is told it lost leadership ({@code revoked} with {@code LOST}): on a session store ({@link
     * LeaseModel#SESSION}: the store ends the session a margin after the client gave it up) strictly before that
     * {@code elected}, both instants read from {@link System#nanoTime()} in the listeners ({@code Lockers.toldBefore});
     * on a renewed-TTL store, whose promise is the validity the holder reckons on its own clock (Redlock: it ends the
     * drift allowance, 1 % of the lease + 2 ms, before the key expires on the masters), within the expiry slack, as
     * the fault matrix asks of a cut-off lock holder. The margin is logged; the next term's epoch is greater where the
     * backend fences.
     */
    @Test
    @Requires({Need.ELECTION, Need.CLIENT_PARTITION})
    default void aPartitionedLeader_isToldItLostLeadership_beforeTheNextTermStarts() throws Exception {
        ClientPartition partition =
                storeFaults().flatMap(StoreFaults::clientPartition).orElseThrow();
        String name = TestKeys.unique("election-partitioned");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        HistoryRecorder history = HistoryRecorder.inMemory();
        Duration connectTimeout = TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT);
        try (RemoteLocker cutOff = partition
                        .lockerBuilder()
                        .connectTimeout(connectTimeout)
                        .leaseTime(shortLeaseTime())
                        .build();
                RemoteLocker other = openLocker(leaseTime())) {
            Candidate leader = Candidate.join(cutOff.election(name), "kit-cut-off", history);
            Candidate next = null;
            try {
                assertTrue(leader.candidacy().awaitLeadership(maxWait()), "the candidate behind the proxies never led");
                OptionalLong deposed =
                        leader.candidacy().currentTerm().orElseThrow().epoch();
                Term deposedTerm = leader.candidacy().currentTerm().orElseThrow();
                LeaderElection election = other.election(name);
                next = Candidate.join(election, "kit-next", history);
                next.watchRival(deposedTerm); // it cannot be elected before the partition
                awaitQueued(other, election.key());
                assertFalse(next.candidacy().isLeader(), "two leaders: " + leader + " and " + next);
                partition.partition();
                try {
                    Candidate successor = next;
                    Duration bound = Lockers.lostWithin(this, model).plus(maxWait());
                    Deadlines.await(
                            () -> successor.firstToldAt("elected").isPresent(),
                            bound,
                            () -> "the leader was cut off from the store, yet the candidate behind it did not lead"
                                    + " within " + bound.toMillis() + " ms: " + successor);
                    long electedAt = successor.firstToldAt("elected").getAsLong();
                    assertTrue(
                            Deadlines.within(expirySlack(), () -> leader.firstToldAt("revoked LOST")
                                    .isPresent()),
                            "another candidate leads, but the cut-off leader was not told it lost leadership: "
                                    + leader);
                    long toldAt = leader.firstToldAt("revoked LOST").getAsLong();
                    log().info(
                                    "The cut-off leader was told it lost leadership {} the next term started ({})",
                                    Lockers.toldAgainst(toldAt, electedAt),
                                    model);
                    assertFalse(
                            successor.rivalCurrentWhenElected().orElseThrow(),
                            "the cut-off leader's term was still current (held by its own reckoning) when the next"
                                    + " term started: two leaders");
                    if (model == LeaseModel.SESSION) {
                        assertTrue(
                                Lockers.toldBefore(toldAt, electedAt),
                                "the cut-off leader was told it lost leadership "
                                        + Lockers.toldAgainst(toldAt, electedAt)
                                        + " the next term started: for that long two candidates believed they led");
                    }
                    assertFalse(leader.candidacy().isLeader(), "the cut-off candidate still says it leads");
                    OptionalLong epoch = successor.believed().orElseThrow().epoch();
                    if (deposed.isPresent()) {
                        assertTrue(
                                epoch.getAsLong() > deposed.getAsLong(),
                                "the epoch after the partition " + epoch + ", before " + deposed);
                    }
                } finally {
                    partition.heal();
                }
            } finally {
                leader.leave();
                if (next != null) {
                    next.leave();
                }
            }
        }
    }

    /**
     * The blocking wait: while another leads, {@code awaitLeadership} returns false after its wait and not before;
     * once the leader left, it returns true.
     */
    @Test
    @Requires(Need.ELECTION)
    default void awaitLeadership_isFalseWhileAnotherLeads_andTrueOnceItLeads() throws Exception {
        String name = TestKeys.unique("election-await");
        Duration shortWait = TestTimeouts.scaled(Duration.ofMillis(300));
        try (Lockers lockers = Lockers.open(this, 2, leaseTime());
                Candidacy first = lockers.get(0).election(name).join("kit-first", IGNORING)) {
            assertTrue(first.awaitLeadership(maxWait()), "the first candidate never led");
            Candidacy next = lockers.get(1).election(name).join("kit-next", IGNORING);
            long start = System.nanoTime();
            assertFalse(next.awaitLeadership(shortWait), "led while another leads");
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(waited.compareTo(shortWait) >= 0, Lockers.gaveUpEarly(waited, shortWait));
            first.close();
            assertTrue(next.awaitLeadership(maxWait()), "never led after the leader left");
            assertTrue(next.currentTerm().orElseThrow().isCurrent(), "the term of the leader is not current");
            next.close();
        }
    }

    /**
     * An election and the lock of the same name never exclude each other: the election's lock is on its own key
     * ({@link LeaderElection#KEY_PREFIX} and the name).
     */
    @Test
    @Requires(Need.ELECTION)
    default void anElection_andTheLockOfItsName_doNotExcludeEachOther() throws Exception {
        String name = TestKeys.unique("election-or-lock");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime());
                RemoteLock lock = lockers.get(0).lock(name, maxWait());
                Candidacy candidate = lockers.get(1).election(name).join("kit-candidate", IGNORING)) {
            assertTrue(candidate.awaitLeadership(maxWait()), "no leader while the lock of the same name is held");
            assertTrue(lock.isHeld(), "the lock of the election's name");
            assertEquals(
                    LeaderElection.KEY_PREFIX + name,
                    lockers.get(1).election(name).key());
        }
    }

    /**
     * Bad input is refused as for locks: a null or blank name, a null, blank or control-character identity, a null
     * listener, a poll interval that is not positive; and a closed locker, also through an election obtained before.
     */
    @Test
    @Requires(Need.ELECTION)
    default void election_refusesBadInput_andAClosedLocker() throws Exception {
        String name = TestKeys.unique("election-bad");
        RemoteLocker locker = openLocker(leaseTime());
        LeaderElection election;
        Candidacy joined;
        try {
            assertThrows(NullPointerException.class, () -> locker.election(null));
            assertThrows(IllegalArgumentException.class, () -> locker.election(" "));
            election = locker.election(name);
            assertThrows(NullPointerException.class, () -> election.join(null, IGNORING));
            assertThrows(IllegalArgumentException.class, () -> election.join(" ", IGNORING));
            IllegalArgumentException control =
                    assertThrows(IllegalArgumentException.class, () -> election.join("kit\nleader", IGNORING));
            assertTrue(control.getMessage().contains("control"), control.getMessage());
            assertThrows(NullPointerException.class, () -> election.join("kit", null));
            assertThrows(
                    IllegalArgumentException.class, () -> election.observe(leader -> {}, Runnable::run, Duration.ZERO));
            joined = election.join("kit-joined", IGNORING);
        } finally {
            locker.close();
        }
        assertThrows(LockerClosedException.class, () -> locker.election(name));
        assertThrows(LockerClosedException.class, () -> election.join("kit", IGNORING));
        assertThrows(LockerClosedException.class, election::leader);
        assertThrows(LockerClosedException.class, () -> election.observe(leader -> {}));
        assertFalse(joined.isLeader(), "a candidacy leads through a closed locker");
        assertThrows(IllegalStateException.class, () -> joined.awaitLeadership(maxWait()));
    }

    private static org.slf4j.Logger log() {
        return org.slf4j.LoggerFactory.getLogger(ElectionContract.class);
    }
}
