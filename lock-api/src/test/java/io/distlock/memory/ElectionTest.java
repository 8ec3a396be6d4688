package io.distlock.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.Candidacy;
import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Term;
import io.distlock.toolkit.ManualTicker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The mechanics of elections on {@code memory:}, where they need no store: terms begun and ended for each reason, the
 * order and thread of the listener's calls, the identity and epoch read back, the observer's polling, the name's
 * mapping to a key. Every backend's elections are checked against its store by the conformance kit.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ElectionTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final String space = "memory:/election-" + UUID.randomUUID();

    /** What a listener was told, in order: "elected <identity>" or "revoked <identity> <reason>", and where. */
    private record Told(String what, Term term, String thread) {}

    private static LeadershipListener recording(BlockingQueue<Told> told) {
        return LeadershipListener.of(
                term -> told.add(new Told(
                        "elected " + term.identity(),
                        term,
                        Thread.currentThread().getName())),
                (term, reason) -> told.add(new Told(
                        "revoked " + term.identity() + " " + reason,
                        term,
                        Thread.currentThread().getName())));
    }

    private static Told next(BlockingQueue<Told> told) throws InterruptedException {
        Told t = told.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(t).as("the listener was not told within " + WAIT).isNotNull();
        return t;
    }

    /** A listener's executor of one thread, "mine", held by a task in front until {@code gate} opens. */
    private static ExecutorService busyUntil(CountDownLatch gate) {
        ExecutorService mine = Executors.newSingleThreadExecutor(r -> new Thread(r, "mine"));
        mine.execute(() -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return mine;
    }

    @Test
    void leader_isTheLeadersIdentity_withItsLocksTokenAsEpoch() throws Exception {
        try (RemoteLocker candidates = RemoteLockers.open(space);
                RemoteLocker other = RemoteLockers.open(space)) {
            LeaderElection election = candidates.election("billing");
            assertThat(election.key()).isEqualTo("%election/billing");
            assertThat(other.election("billing").leader()).isEmpty();
            BlockingQueue<Told> told = new LinkedBlockingQueue<>();
            try (Candidacy a = election.join("10.0.0.7:8080", recording(told))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Term term = a.currentTerm().orElseThrow();
                assertThat(term.epoch()).isPresent();
                Leader leader = other.election("billing").leader().orElseThrow();
                assertThat(leader.identity()).isEqualTo("10.0.0.7:8080");
                assertThat(leader.epoch()).isEqualTo(term.epoch());
                assertThat(leader.since()).isPresent();
                assertThat(other.inspect("%election/billing").holders())
                        .singleElement()
                        .satisfies(h -> assertThat(h.ownerLabel()).isEqualTo("10.0.0.7:8080"));
                assertThat(next(told).what()).isEqualTo("elected 10.0.0.7:8080");
            }
            assertThat(other.election("billing").leader()).isEmpty();
            assertThat(next(told).what()).isEqualTo("revoked 10.0.0.7:8080 LEFT");
        }
    }

    @Test
    void listener_isToldInOrder_onTheGivenExecutor() throws Exception {
        ExecutorService mine = Executors.newFixedThreadPool(4, r -> new Thread(r, "mine"));
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            BlockingQueue<Told> told = new LinkedBlockingQueue<>();
            // Each step-down once the listener was told: a term ended before that is never told (the next test)
            try (Candidacy a = locker.election("e").join("a", recording(told), mine)) {
                for (int i = 0; i < 20; i++) {
                    assertThat(a.awaitLeadership(WAIT)).isTrue();
                    Told elected = next(told);
                    assertThat(elected.what()).isEqualTo("elected a");
                    assertThat(elected.thread()).isEqualTo("mine");
                    assertThat(a.stepDown()).isTrue();
                    Told revoked = next(told);
                    assertThat(revoked.what()).isEqualTo("revoked a STEPPED_DOWN");
                    assertThat(revoked.thread()).isEqualTo("mine");
                    assertThat(revoked.term()).isSameAs(elected.term());
                    assertThat(revoked.term().isCurrent()).isFalse();
                }
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                assertThat(next(told).what()).isEqualTo("elected a");
            }
            assertThat(next(told).what()).isEqualTo("revoked a LEFT");
        } finally {
            mine.shutdown();
        }
    }

    /**
     * A term that ended before its listener's executor ran {@code elected} (here held by a task in front) is never
     * told: the listener hears neither its {@code elected}, which would come when another candidate may lead, nor its
     * {@code revoked}. The next term is told.
     */
    @Test
    void aTermEndedBeforeItsElectedWasTold_isNeverTold() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        ExecutorService mine = busyUntil(gate);
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            BlockingQueue<Told> told = new LinkedBlockingQueue<>();
            try (Candidacy a = locker.election("e").join("a", recording(told), mine);
                    Candidacy b = locker.election("e").join("b", recording(told))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Term first = a.currentTerm().orElseThrow();
                assertThat(a.stepDown()).isTrue(); // before a's executor could tell it
                assertThat(b.awaitLeadership(WAIT)).isTrue();
                assertThat(next(told).what()).isEqualTo("elected b");
                gate.countDown();
                b.close();
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                // b's revoked and a's elected come on two executors, in either order
                List<Told> two = List.of(next(told), next(told));
                assertThat(two.stream().map(Told::what)).containsExactlyInAnyOrder("elected a", "revoked b LEFT");
                assertThat(two.stream()
                                .filter(t -> t.what().equals("elected a"))
                                .findFirst()
                                .orElseThrow()
                                .term())
                        .isNotSameAs(first);
            }
            assertThat(next(told).what()).isEqualTo("revoked a LEFT");
            assertThat(told.poll(200, TimeUnit.MILLISECONDS)).isNull();
        } finally {
            mine.shutdown();
        }
    }

    /**
     * A term whose lock's validity ran out before its {@code elected} was told is over, though the validity timer has
     * not noticed the loss yet: the listener is not told it leads (another candidate may, once the store lets the lock
     * go), and the candidate queues again; its next term is told.
     */
    @Test
    void aTermWhoseValidityRanOutBeforeItsElectedWasTold_isNeverTold() throws Exception {
        ManualTicker ticker = new ManualTicker();
        Duration lease = Duration.ofSeconds(30);
        CountDownLatch gate = new CountDownLatch(1);
        ExecutorService mine = busyUntil(gate);
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(space)
                .leaseTime(lease)
                .ticker(ticker)
                .build()) {
            BlockingQueue<Told> told = new LinkedBlockingQueue<>();
            try (Candidacy a = locker.election("e").join("a", recording(told), mine)) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Term first = a.currentTerm().orElseThrow();
                ticker.advance(lease.plusSeconds(1)); // the lock's validity ran out while a's executor was busy
                gate.countDown();
                Told elected = next(told);
                assertThat(elected.what()).isEqualTo("elected a");
                assertThat(elected.term()).as("the term whose validity ran out").isNotSameAs(first);
                assertThat(elected.term().epoch().orElseThrow())
                        .isGreaterThan(first.epoch().orElseThrow());
                assertThat(first.isCurrent()).isFalse();
            }
            assertThat(next(told).what()).isEqualTo("revoked a LEFT");
            assertThat(told.poll(200, TimeUnit.MILLISECONDS)).isNull();
        } finally {
            gate.countDown();
            mine.shutdown();
        }
    }

    /**
     * A step-down from another thread while the listener is being told {@code elected} waits for that call to return
     * before it lets the lock go: the next leader is never elected while this candidate's listener is still being told
     * that it leads.
     */
    @Test
    void stepDownDuringElected_waitsForTheListenerToReturn_beforeTheNextLeaderIsElected() throws Exception {
        CountDownLatch inElected = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        LeadershipListener slow = LeadershipListener.of(
                term -> {
                    inElected.countDown();
                    try {
                        letGo.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                (term, reason) -> {});
        ExecutorService stepping = Executors.newSingleThreadExecutor();
        try (RemoteLocker locker = RemoteLockers.open(space);
                Candidacy a = locker.election("e").join("a", slow);
                Candidacy b = locker.election("e").join("b", LeadershipListener.of(t -> {}, (t, r) -> {}))) {
            assertThat(inElected.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            CompletableFuture<Boolean> stepDown = CompletableFuture.supplyAsync(a::stepDown, stepping);
            assertThat(b.awaitLeadership(Duration.ofMillis(300)))
                    .as("b elected while a's listener is still in elected()")
                    .isFalse();
            assertThat(stepDown).isNotDone();
            letGo.countDown();
            assertThat(stepDown.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(b.awaitLeadership(WAIT)).isTrue();
        } finally {
            letGo.countDown();
            stepping.shutdown();
        }
    }

    @Test
    void aListenerOnADirectExecutor_holdsNoLockOfTheCandidacy() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            AtomicReference<Candidacy> joined = new AtomicReference<>();
            AtomicReference<Thread> toldOn = new AtomicReference<>();
            CountDownLatch set = new CountDownLatch(1);
            CompletableFuture<Boolean> leadsSeenFromAnotherThread = new CompletableFuture<>();
            LeadershipListener asking = LeadershipListener.of(
                    term -> {
                        toldOn.set(Thread.currentThread());
                        try {
                            set.await();
                            leadsSeenFromAnotherThread.complete(CompletableFuture.supplyAsync(
                                            () -> joined.get().isLeader())
                                    .get(2, TimeUnit.SECONDS));
                        } catch (Exception e) {
                            leadsSeenFromAnotherThread.completeExceptionally(e);
                        }
                    },
                    (term, reason) -> {});
            try (Candidacy a = locker.election("e").join("a", asking, Runnable::run)) {
                joined.set(a);
                set.countDown();
                assertThat(leadsSeenFromAnotherThread.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                        .isTrue();
                assertThat(toldOn.get())
                        .as("join() returns at once: the listener never runs on the joining thread")
                        .isNotSameAs(Thread.currentThread());
            }
        }
    }

    @Test
    void stepDown_handsLeadershipToTheWaiter_andQueuesAgain() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            LeaderElection election = locker.election("e");
            // one queue per candidate: each candidacy's listener is told in order, two candidacies' listeners are
            // told on the locker's workers with no order between them (b's "elected" may be delivered after a's next)
            BlockingQueue<Told> toldA = new LinkedBlockingQueue<>();
            BlockingQueue<Told> toldB = new LinkedBlockingQueue<>();
            try (Candidacy a = election.join("a", recording(toldA));
                    Candidacy b = election.join("b", recording(toldB))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                long epochA = a.currentTerm().orElseThrow().epoch().orElseThrow();
                // each term ended once told: one ended before is never told (aTermEndedBeforeItsElectedWasTold)
                assertThat(next(toldA).what()).isEqualTo("elected a");
                assertThat(b.isLeader()).isFalse();
                assertThat(a.stepDown()).isTrue();
                assertThat(b.awaitLeadership(WAIT)).isTrue();
                assertThat(b.currentTerm().orElseThrow().epoch().orElseThrow()).isGreaterThan(epochA);
                assertThat(a.isLeader()).isFalse();
                assertThat(next(toldB).what()).isEqualTo("elected b");
                b.close();
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                assertThat(List.of(next(toldA), next(toldA)).stream().map(Told::what))
                        .containsExactly("revoked a STEPPED_DOWN", "elected a");
                assertThatThrownBy(b::stepDown)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("closed");
            }
            assertThat(next(toldB).what()).isEqualTo("revoked b LEFT");
        }
    }

    @Test
    void stepDownOfATerm_endsItOnlyWhileItIsCurrent() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            LeaderElection election = locker.election("e");
            try (Candidacy a = election.join("a", LeadershipListener.of(t -> {}, (t, r) -> {}));
                    Candidacy b = election.join("b", LeadershipListener.of(t -> {}, (t, r) -> {}))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Term first = a.currentTerm().orElseThrow();
                assertThat(a.stepDown()).isTrue();
                assertThat(b.awaitLeadership(WAIT)).isTrue();
                assertThat(b.stepDown(first)).as("another candidacy's term").isFalse();
                assertThat(b.isLeader()).isTrue();
                b.close();
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Term second = a.currentTerm().orElseThrow();

                assertThat(a.stepDown(first)).as("a term of its own that ended").isFalse();
                assertThat(a.currentTerm()).contains(second);
                assertThat(a.stepDown(second)).as("the current term").isTrue();
                assertThat(second.isCurrent()).isFalse();
                assertThatThrownBy(() -> a.stepDown(null)).isInstanceOf(NullPointerException.class);
            }
        }
    }

    @Test
    void aLostLock_endsTheTerm_andTheCandidateQueuesAgain() throws Exception {
        // memory: tells a holder its entry is gone when it renews, every third of the lease
        try (RemoteLocker locker = RemoteLockers.builder()
                        .uri(space)
                        .leaseTime(Duration.ofMillis(300))
                        .build();
                RemoteLocker admin = RemoteLockers.open(space)) {
            BlockingQueue<Told> told = new LinkedBlockingQueue<>();
            try (Candidacy a = locker.election("e").join("a", recording(told))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Term first = a.currentTerm().orElseThrow();
                assertThat(next(told).what()).isEqualTo("elected a");
                assertThat(admin.breakLock("%election/e")).hasSize(1);
                Told revoked = next(told);
                assertThat(revoked.what()).isEqualTo("revoked a LOST");
                assertThat(first.isCurrent()).isFalse();
                Told again = next(told);
                assertThat(again.what()).isEqualTo("elected a");
                assertThat(again.term().epoch().orElseThrow())
                        .isGreaterThan(first.epoch().orElseThrow());
                assertThat(a.isLeader()).isTrue();
            }
        }
    }

    @Test
    void closingTheLocker_endsItsCandidacies_tellingTheLeaderWhy() throws Exception {
        RemoteLocker locker = RemoteLockers.open(space);
        BlockingQueue<Told> told = new LinkedBlockingQueue<>();
        Candidacy a = locker.election("e").join("a", recording(told));
        Candidacy b = locker.election("e").join("b", recording(told));
        assertThat(a.awaitLeadership(WAIT)).isTrue();
        assertThat(next(told).what()).isEqualTo("elected a");
        locker.close();
        assertThat(a.isLeader()).isFalse();
        assertThat(next(told).what()).isEqualTo("revoked a LOCKER_CLOSED");
        assertThatThrownBy(() -> b.awaitLeadership(WAIT)).isInstanceOf(IllegalStateException.class);
        try (RemoteLocker other = RemoteLockers.open(space)) {
            assertThat(other.election("e").leader()).isEmpty();
        }
    }

    @Test
    void observe_tellsTheLeaderNow_andEveryChange_untilClosed() throws Exception {
        ExecutorService mine = Executors.newSingleThreadExecutor(r -> new Thread(r, "observer"));
        try (RemoteLocker candidates = RemoteLockers.open(space);
                RemoteLocker observer = RemoteLockers.open(space)) {
            BlockingQueue<Optional<Leader>> seen = new LinkedBlockingQueue<>();
            LeaderElection.Subscription subscription =
                    observer.election("e").observe(seen::add, mine, Duration.ofMillis(20));
            assertThat(seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
            try (Candidacy a = candidates.election("e").join("a", recording(new LinkedBlockingQueue<>()))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                Optional<Leader> leader = seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(leader).isPresent();
                assertThat(leader.orElseThrow().identity()).isEqualTo("a");
                assertThat(leader.orElseThrow().epoch())
                        .isEqualTo(a.currentTerm().orElseThrow().epoch());
                Thread.sleep(100); // five more polls, no change
                assertThat(seen).isEmpty();
            }
            assertThat(seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isEmpty();
            subscription.close();
            try (Candidacy b = candidates.election("e").join("b", recording(new LinkedBlockingQueue<>()))) {
                assertThat(b.awaitLeadership(WAIT)).isTrue();
                assertThat(seen.poll(200, TimeUnit.MILLISECONDS))
                        .as("told after close")
                        .isNull();
            }
        } finally {
            mine.shutdown();
        }
    }

    @Test
    void anElection_andTheLockOfTheSameName_doNotExcludeEachOther() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(space);
                RemoteLocker other = RemoteLockers.open(space)) {
            try (RemoteLock lock = other.lock("jobs", WAIT);
                    Candidacy a = locker.election("jobs").join("a", recording(new LinkedBlockingQueue<>()))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
                assertThat(lock.isHeld()).isTrue();
                assertThat(locker.tryLock("jobs")).isEmpty(); // the lock is still taken, by the lock
            }
        }
    }

    @Test
    void aRefusedIdentity_isShownOnOneShortLine() {
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            LeaderElection election = locker.election("jobs");
            LeadershipListener ignoring = new LeadershipListener() {
                @Override
                public void elected(Term term) {}

                @Override
                public void revoked(Term term, Reason reason) {}
            };
            assertThatThrownBy(() -> election.join("kit\nleader", ignoring))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Candidate identity 'kit\\u000aleader'")
                    .hasMessageContaining("control characters")
                    .hasMessageNotContaining("\n");
            String huge = "\n" + "x".repeat(100_000);
            assertThatThrownBy(() -> election.join(huge, ignoring))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'\\u000a" + "x".repeat(39) + "...'")
                    .hasMessageContaining("100001 bytes")
                    .hasMessageNotContaining("\n")
                    .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(300));
        }
    }

    @Test
    void anElectionName_isCheckedAsTheKeyItMapsTo() {
        try (RemoteLocker locker = RemoteLockers.open(space)) {
            String longest = "n".repeat(RemoteLocker.MAX_KEY_BYTES - LeaderElection.KEY_PREFIX.length());
            assertThat(locker.election(longest).key()).hasSize(RemoteLocker.MAX_KEY_BYTES);
            assertThatThrownBy(() -> locker.election(longest + "n"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Election name is not valid")
                    .hasMessageContaining("%election/");
            assertThatThrownBy(() -> locker.election(" \t"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("Election name must not be blank, got ' \\u0009'");
        }
    }

    @Test
    void aBackendWithoutInspection_elects_butCannotSayWhoLeads() throws Exception {
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(space)
                .provider(new LockOnlyProvider())
                .build()) {
            LeaderElection election = locker.election("e");
            try (Candidacy a = election.join("a", recording(new LinkedBlockingQueue<>()))) {
                assertThat(a.awaitLeadership(WAIT)).isTrue();
            }
            assertThatThrownBy(election::leader)
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("Election 'e' cannot say who leads")
                    .hasMessageContaining("offers no inspection");
            assertThatThrownBy(() -> election.observe(l -> {}))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("offers no inspection");
        }
    }
}
