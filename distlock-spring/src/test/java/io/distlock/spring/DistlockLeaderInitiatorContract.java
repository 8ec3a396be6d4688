package io.distlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Leader;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;

/**
 * What {@link DistlockLeaderInitiator} promises, on a real store: a subclass names the store. Each initiator has a
 * locker of its own, as two processes would, and publishes to the application event publisher Spring would set.
 */
abstract class DistlockLeaderInitiatorContract {

    static final Duration WAIT = Duration.ofSeconds(20);

    private final List<RemoteLocker> lockers = new ArrayList<>();
    private final List<DistlockLeaderInitiator> initiators = new ArrayList<>();
    private final ExecutorService named = Executors.newSingleThreadExecutor(r -> new Thread(r, "leader-callbacks"));
    /** Every event published, from every initiator, in the order published. */
    final Queue<AbstractLeaderEvent> events = new ConcurrentLinkedQueue<>();

    String role;

    /** The store's URI; {@code ttl} is the lease of the election's lock. */
    abstract String uri(Duration ttl);

    @BeforeEach
    void name(TestInfo test) {
        role = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void close() {
        initiators.forEach(DistlockLeaderInitiator::stop);
        lockers.forEach(RemoteLocker::close);
        named.shutdownNow();
    }

    private RemoteLocker locker(Duration ttl) {
        RemoteLocker locker = RemoteLockers.open(uri(ttl));
        lockers.add(locker);
        return locker;
    }

    DistlockLeaderInitiator initiator(Candidate candidate) {
        return initiator(locker(Duration.ofSeconds(30)), candidate);
    }

    private DistlockLeaderInitiator initiator(RemoteLocker locker, Candidate candidate) {
        DistlockLeaderInitiator initiator = new DistlockLeaderInitiator(locker.election(role), candidate);
        initiator.setApplicationEventPublisher(e -> events.add((AbstractLeaderEvent) e));
        initiators.add(initiator);
        return initiator;
    }

    /** A candidate that records what it is told, and on which thread. */
    static class Recording implements Candidate {
        final String id;
        final Queue<String> told = new ConcurrentLinkedQueue<>();
        final Queue<Context> contexts = new ConcurrentLinkedQueue<>();
        final Queue<String> threads = new ConcurrentLinkedQueue<>();

        Recording(String id) {
            this.id = id;
        }

        @Override
        public String getRole() {
            return "ignored: the election names the role";
        }

        @Override
        public String getId() {
            return id;
        }

        @Override
        public void onGranted(Context context) throws InterruptedException {
            record("granted", context);
        }

        @Override
        public void onRevoked(Context context) {
            record("revoked", context);
        }

        private void record(String what, Context context) {
            threads.add(Thread.currentThread().getName());
            contexts.add(context);
            told.add(what + " " + id + " " + ((ElectionContext) context).epoch());
        }
    }

    private List<String> eventsOf(DistlockLeaderInitiator initiator) {
        return events.stream()
                .filter(e -> e.getSource() == initiator)
                .map(e -> e.getClass().getSimpleName())
                .toList();
    }

    private static long epochOf(AbstractLeaderEvent event) {
        OptionalLong epoch = ((ElectionContext) event.getContext()).epoch();
        assertThat(epoch).as("the epoch of %s", event).isPresent();
        return epoch.getAsLong();
    }

    private DistlockLeaderInitiator awaitOneLeader(DistlockLeaderInitiator a, DistlockLeaderInitiator b)
            throws InterruptedException {
        Deadlines.await(() -> a.getContext().isLeader() || b.getContext().isLeader(), WAIT, () -> "a leader");
        assertThat(Deadlines.within(
                        TestTimeouts.scaled(Duration.ofMillis(500)),
                        () -> a.getContext().isLeader() && b.getContext().isLeader()))
                .as("both lead at once")
                .isFalse();
        return a.getContext().isLeader() ? a : b;
    }

    @Test
    void start_grantsLeadership_withTheEpochInTheContext_andStopRevokesIt() {
        Recording candidate = new Recording("node-a");
        DistlockLeaderInitiator initiator = initiator(candidate);
        assertThat(initiator.isRunning()).isFalse();
        assertThat(initiator.getContext().isLeader()).isFalse();

        initiator.start();

        assertThat(initiator.isRunning()).isTrue();
        Deadlines.await(() -> events.size() == 1, WAIT, () -> "the granted event");
        AbstractLeaderEvent granted = events.peek();
        assertThat(granted).isInstanceOf(OnGrantedEvent.class);
        assertThat(granted.getSource()).isSameAs(initiator);
        assertThat(granted.getRole()).isEqualTo(role);
        ElectionContext context = (ElectionContext) granted.getContext();
        assertThat(context.isLeader()).isTrue();
        assertThat(context.getRole()).isEqualTo(role);
        Leader leader = initiator.getElection().leader().orElseThrow();
        assertThat(leader.identity()).isEqualTo("node-a");
        assertThat(context.epoch()).as("the epoch the store keeps").isEqualTo(leader.epoch());
        assertThat(context.epoch()).isPresent();
        assertThat(initiator.getContext().epoch()).isEqualTo(leader.epoch());
        assertThat(candidate.contexts).containsExactly(context);

        initiator.stop();

        assertThat(initiator.isRunning()).isFalse();
        Deadlines.await(() -> events.size() == 2, WAIT, () -> "the revoked event");
        assertThat(eventsOf(initiator)).containsExactly("OnGrantedEvent", "OnRevokedEvent");
        AbstractLeaderEvent revoked = List.copyOf(events).get(1);
        assertThat(revoked.getContext()).as("the term's context").isSameAs(context);
        assertThat(context.isLeader()).isFalse();
        assertThat(context.epoch()).as("still the term's epoch").isEqualTo(leader.epoch());
        assertThat(initiator.getContext().isLeader()).isFalse();
        assertThat(initiator.getContext().epoch()).isEmpty();
        assertThat(candidate.told)
                .containsExactly("granted node-a " + leader.epoch(), "revoked node-a " + leader.epoch());
        assertThat(candidate.threads).doesNotContain(Thread.currentThread().getName());
        assertThat(initiator.getElection().leader()).isEmpty();
    }

    @Test
    void yield_handsLeadershipToASecondInitiator_andQueuesAgain() throws Exception {
        DistlockLeaderInitiator a = initiator(new Recording("a"));
        DistlockLeaderInitiator b = initiator(new Recording("b"));
        a.start();
        b.start();
        DistlockLeaderInitiator leader = awaitOneLeader(a, b);
        DistlockLeaderInitiator follower = leader == a ? b : a;
        Deadlines.await(() -> events.size() == 1, WAIT, () -> "the first grant told");

        leader.getContext().yield();

        Deadlines.await(() -> follower.getContext().isLeader(), WAIT, () -> "leadership handed to the follower");
        Deadlines.await(() -> events.size() == 3, WAIT, () -> "the revocation and the next grant told");
        assertThat(eventsOf(leader)).containsExactly("OnGrantedEvent", "OnRevokedEvent");
        assertThat(eventsOf(follower)).containsExactly("OnGrantedEvent");
        List<AbstractLeaderEvent> all = List.copyOf(events);
        AbstractLeaderEvent first = all.stream()
                .filter(e -> e.getSource() == leader && e instanceof OnGrantedEvent)
                .findFirst()
                .orElseThrow();
        AbstractLeaderEvent next =
                all.stream().filter(e -> e.getSource() == follower).findFirst().orElseThrow();
        assertThat(epochOf(next)).as("the next term's epoch").isGreaterThan(epochOf(first));

        follower.stop();

        Deadlines.await(() -> leader.getContext().isLeader(), WAIT, () -> "the one that yielded, queued again, leads");
    }

    @Test
    void stop_handsLeadershipOn_withoutWaitingForTheLease() throws Exception {
        DistlockLeaderInitiator a = initiator(locker(Duration.ofSeconds(60)), new Recording("a"));
        DistlockLeaderInitiator b = initiator(locker(Duration.ofSeconds(60)), new Recording("b"));
        a.start();
        b.start();
        DistlockLeaderInitiator leader = awaitOneLeader(a, b);
        DistlockLeaderInitiator follower = leader == a ? b : a;
        Deadlines.await(() -> eventsOf(leader).size() == 1, WAIT, () -> "the leader told it leads");

        leader.stop();

        Deadlines.await(
                () -> follower.getContext().isLeader(),
                Duration.ofSeconds(5),
                () -> "the follower leads well before the 60 s lease of the stopped leader's lock ran out");
        Deadlines.await(() -> eventsOf(leader).size() == 2, WAIT, () -> "the stopped leader's revocation told");
        assertThat(eventsOf(leader)).containsExactly("OnGrantedEvent", "OnRevokedEvent");
    }

    @Test
    void aTermsContext_yieldsOnlyItsOwnTerm() throws Exception {
        Recording candidate = new Recording("a");
        DistlockLeaderInitiator a = initiator(candidate);
        a.start();
        Deadlines.await(() -> candidate.contexts.size() == 1, WAIT, () -> "a granted");
        ElectionContext first = (ElectionContext) candidate.contexts.peek();

        first.yield();

        Deadlines.await(() -> candidate.contexts.size() == 3, WAIT, () -> "a revoked and, alone, granted again");
        ElectionContext second =
                (ElectionContext) List.copyOf(candidate.contexts).get(2);
        assertThat(second.isLeader()).isTrue();
        assertThat(first.isLeader()).isFalse();
        assertThat(second.epoch().getAsLong()).isGreaterThan(first.epoch().getAsLong());

        first.yield();

        assertThat(Deadlines.holdsFor(TestTimeouts.scaled(Duration.ofMillis(300)), second::isLeader))
                .as("the later term goes on")
                .isTrue();
        assertThat(candidate.told).hasSize(3);
        assertThat(eventsOf(a)).containsExactly("OnGrantedEvent", "OnRevokedEvent", "OnGrantedEvent");
    }

    @Test
    void onGrantedThatThrows_stepsDown_andTheWaitingCandidateLeads() throws Exception {
        CountDownLatch bWaits = new CountDownLatch(1);
        AtomicBoolean refuse = new AtomicBoolean(true);
        Recording refusing = new Recording("a") {
            @Override
            public void onGranted(Context context) throws InterruptedException {
                super.onGranted(context);
                if (refuse.getAndSet(false)) {
                    bWaits.await();
                    throw new IllegalStateException("cannot lead yet");
                }
            }
        };
        DistlockLeaderInitiator a = initiator(refusing);
        a.start();
        Deadlines.await(() -> a.getContext().isLeader(), WAIT, () -> "a leads");
        DistlockLeaderInitiator b = initiator(new Recording("b"));
        b.start();
        Deadlines.await(
                () -> lockers.get(0).inspect(b.getElection().key()).waiting().orElseThrow() >= 1,
                WAIT,
                () -> "b waits behind a");
        bWaits.countDown();

        Deadlines.await(() -> b.getContext().isLeader(), WAIT, () -> "b leads after a stepped down");
        Deadlines.await(() -> refusing.told.size() == 2, WAIT, () -> "a told of its revocation");
        assertThat(refusing.told.stream().map(t -> t.split(" ")[0])).containsExactly("granted", "revoked");
        Deadlines.await(() -> !eventsOf(a).isEmpty(), WAIT, () -> "a's revocation published");
        assertThat(eventsOf(a)).as("no grant published for a term refused").containsExactly("OnRevokedEvent");
    }

    @Test
    void start_afterStop_joinsAgain() {
        Recording candidate = new Recording("a");
        DistlockLeaderInitiator a = initiator(candidate);
        a.start();
        Deadlines.await(() -> candidate.told.size() == 1, WAIT, () -> "a told it leads");
        a.stop();

        a.start();

        assertThat(a.isRunning()).isTrue();
        Deadlines.await(() -> a.getContext().isLeader(), WAIT, () -> "a leads again");
        Deadlines.await(() -> candidate.told.size() == 3, WAIT, () -> "the second grant told");
        assertThat(candidate.told.stream().map(t -> t.split(" ")[0])).containsExactly("granted", "revoked", "granted");
    }

    @Test
    void callbacks_runOnTheGivenExecutor() {
        Recording candidate = new Recording("a");
        DistlockLeaderInitiator a = initiator(candidate);
        a.setTaskExecutor(named);
        a.start();
        Deadlines.await(() -> candidate.threads.size() == 1, WAIT, () -> "a granted");
        a.stop();
        Deadlines.await(() -> candidate.threads.size() == 2, WAIT, () -> "a revoked");
        assertThat(candidate.threads).containsOnly("leader-callbacks");
    }
}
