package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.Candidacy;
import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.utils.ZKPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * distlock and Curator's {@code InterProcessMutex} on the same path exclude each other, both ways, and share one FIFO
 * queue: the mutex's path is {@code <basePath>/<encoded key>}. distlock's elections and Curator's {@code LeaderSelector}
 * (which stands on that mutex) are one election: {@link Elections}.
 */
@Timeout(120)
class CuratorInteropTest {

    private static final String BASE = "/interop";
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static TestingServer server;
    private static CuratorFramework curator;
    private static RemoteLocker locker;
    private static RemoteLocker otherLocker;

    @BeforeAll
    static void start() throws Exception {
        server = ZkTestServers.server();
        curator = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        curator.start();
        curator.blockUntilConnected();
        locker = RemoteLockers.open("zk://" + server.getConnectString() + BASE);
        otherLocker = RemoteLockers.open("zk://" + server.getConnectString() + BASE);
    }

    @AfterAll
    static void stop() throws Exception {
        if (otherLocker != null) {
            otherLocker.close();
        }
        if (locker != null) {
            locker.close();
        }
        if (curator != null) {
            curator.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static InterProcessMutex mutex(String key) {
        return new InterProcessMutex(curator, ZKPaths.makePath(BASE, KeyCodec.encode(key)));
    }

    @Test
    void distlockHolder_excludesCuratorMutex() throws Exception {
        InterProcessMutex mutex = mutex("orders/42");
        try (RemoteLock held = locker.lock("orders/42", WAIT)) {
            assertThat(held.isHeld()).isTrue();
            assertThat(mutex.acquire(300, TimeUnit.MILLISECONDS)).isFalse();
        }
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        mutex.release();
    }

    @Test
    void curatorMutexHolder_excludesDistlock() throws Exception {
        InterProcessMutex mutex = mutex("orders/43");
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(locker.tryLock("orders/43")).isEmpty();
            assertThatThrownBy(() -> locker.lock("orders/43", Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class);
        } finally {
            mutex.release();
        }
        try (RemoteLock lock = locker.lock("orders/43", WAIT)) {
            assertThat(lock.isHeld()).isTrue();
        }
    }

    /**
     * Inspection reads Curator's holder too: its node is the queue's head; the label is what Curator stores in it (its
     * client's address), since that is no distlock owner id. Breaking it deletes Curator's node, as {@code zkCli.sh}
     * would, and lets distlock in.
     */
    @Test
    void curatorMutexHolder_isShownByInspect_withItsNodesData_andCanBeBroken() throws Exception {
        InterProcessMutex mutex = mutex("orders/44");
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        try {
            String data = new String(
                    curator.getData()
                            .forPath(mutex.getParticipantNodes().iterator().next()),
                    java.nio.charset.StandardCharsets.UTF_8);
            LockState state = locker.inspect("orders/44");
            assertThat(state.holders()).extracting(LockHolder::ownerLabel).containsExactly(data);
            assertThat(locker.listHeld()).extracting(LockState::key).contains("orders/44");
            assertThat(locker.breakLock("orders/44")).hasSize(1);
            try (RemoteLock lock = locker.lock("orders/44", WAIT)) {
                assertThat(lock.isHeld()).isTrue();
            }
        } finally {
            mutex.release(); // Curator ignores its node being gone already
        }
    }

    @Test
    void distlockWaiter_isWokenByCuratorRelease_beforeALaterCuratorWaiter() throws Exception {
        String key = "orders/44";
        InterProcessMutex first = mutex(key);
        assertThat(first.acquire(10, TimeUnit.SECONDS)).isTrue();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<RemoteLock> distlockWaiter = pool.submit(() -> locker.lock(key, WAIT));
            Conditions.await("the distlock waiter queued", WAIT, () -> children(key) == 2);
            InterProcessMutex later = mutex(key);
            Future<Boolean> curatorWaiter = pool.submit(() -> {
                boolean got = later.acquire(20, TimeUnit.SECONDS);
                if (got) {
                    later.release();
                }
                return got;
            });
            Conditions.await("the later Curator waiter queued", WAIT, () -> children(key) == 3);
            first.release();
            RemoteLock lock = distlockWaiter.get(20, TimeUnit.SECONDS);
            assertThat(lock.isHeld()).isTrue();
            assertThat(curatorWaiter.isDone()).isFalse();
            lock.close();
            assertThat(curatorWaiter.get(20, TimeUnit.SECONDS)).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Curator's {@code Revoker} writes {@code __REVOKE__} into a holder's node: a distlock holder hears it as a release
     * request, since any change of its node's data is one (the node's data is then Curator's marker, which inspection
     * shows as the label until the lock ends).
     */
    @Test
    void curatorRevoker_onADistlockHolder_runsItsReleaseListenerOnce() throws Exception {
        String key = "orders/45";
        AtomicInteger heard = new AtomicInteger();
        try (RemoteLock lock = locker.lock(key, WAIT)) {
            lock.onReleaseRequested(l -> heard.incrementAndGet());
            String lockPath = ZKPaths.makePath(BASE, KeyCodec.encode(key));
            String node = ZKPaths.makePath(
                    lockPath, curator.getChildren().forPath(lockPath).get(0));
            Revoker.attemptRevoke(curator, node);
            Conditions.await("the release listener ran", WAIT, () -> heard.get() == 1);
            Thread.sleep(200);
            assertThat(heard.get()).isEqualTo(1);
            assertThat(lock.isHeld()).isTrue();
        }
    }

    /**
     * The other way, a limit: distlock's request writes a Curator holder's node data back unchanged, and Curator's
     * revocable mutex acts only on {@code __REVOKE__}, so its revocation listener does not run. The holder is
     * counted as asked (its node was written), and keeps its data.
     */
    @Test
    void requestRelease_onACuratorRevocableHolder_isNotHeardByIt() throws Exception {
        String key = "orders/46";
        InterProcessMutex mutex = mutex(key);
        AtomicInteger revoked = new AtomicInteger();
        mutex.makeRevocable(m -> revoked.incrementAndGet());
        assertThat(mutex.acquire(10, TimeUnit.SECONDS)).isTrue();
        try {
            String node = mutex.getParticipantNodes().iterator().next();
            byte[] data = curator.getData().forPath(node);
            assertThat(locker.requestRelease(key)).hasSize(1);
            Thread.sleep(500);
            assertThat(revoked.get()).isZero();
            assertThat(curator.getData().forPath(node)).isEqualTo(data);
            // Curator's own Revoker does reach it: the mutex is revocable, so the silence above is distlock's
            Revoker.attemptRevoke(curator, node);
            Conditions.await("Curator's revocation listener ran", WAIT, () -> revoked.get() == 1);
        } finally {
            mutex.release();
        }
    }

    private static int children(String key) {
        try {
            return curator.getChildren()
                    .forPath(ZKPaths.makePath(BASE, KeyCodec.encode(key)))
                    .size();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * distlock's elections and Curator's {@code LeaderSelector} on {@code <basePath>/%25election%2F<name>} are one
     * election: one queue in arrival order, one leader at a time, and each side reads the other's leader (an election's
     * node holds the candidate's identity, which is what {@code LeaderSelector} stores as its participant id). Curator's
     * {@code LeaderLatch} is not: it leads beside a distlock leader.
     */
    @Nested
    class Elections {

        /** The path a Curator user gives for the distlock election {@code name}: the base path, then the encoded key. */
        private static String electionPath(String name) {
            String path = BASE + "/%25election%2F" + name;
            assertThat(path).isEqualTo(ZKPaths.makePath(BASE, KeyCodec.encode(LeaderElection.KEY_PREFIX + name)));
            return path;
        }

        /** Who leads in what order, as each leader was told: distlock's candidates and Curator's selectors alike. */
        private static final class Record {
            private final List<String> elected = Collections.synchronizedList(new ArrayList<>());

            LeadershipListener listener() {
                return LeadershipListener.of(term -> elected.add(term.identity()), (term, reason) -> {});
            }

            List<String> elected() {
                synchronized (elected) {
                    return List.copyOf(elected);
                }
            }
        }

        /** A started {@code LeaderSelector} whose {@code takeLeadership} holds leadership until {@link #stepDown()}. */
        private static final class CuratorCandidate implements AutoCloseable {
            final String id;
            final LeaderSelector selector;
            final CountDownLatch took = new CountDownLatch(1);
            final CountDownLatch released = new CountDownLatch(1);
            volatile boolean interrupted;

            CuratorCandidate(String name, String id, Record record) {
                this.id = id;
                this.selector = new LeaderSelector(curator, electionPath(name), new LeaderSelectorListenerAdapter() {
                    @Override
                    public void takeLeadership(CuratorFramework client) {
                        record.elected.add(id);
                        took.countDown();
                        try {
                            released.await();
                        } catch (InterruptedException e) {
                            interrupted = true;
                            Thread.currentThread().interrupt();
                        }
                    }
                });
                selector.setId(id);
                selector.start();
            }

            boolean tookLeadership(Duration within) throws InterruptedException {
                return took.await(TestTimeouts.scaled(within).toMillis(), TimeUnit.MILLISECONDS);
            }

            /** Returns from {@code takeLeadership}: Curator releases its node. */
            void stepDown() {
                released.countDown();
            }

            @Override
            public void close() {
                selector.close();
            }
        }

        /** Waits until {@code record} holds exactly {@code identities}: a leader is told after it is granted. */
        private static void awaitElected(Record record, String... identities) throws InterruptedException {
            Conditions.await("the leaders told in the order " + List.of(identities), WAIT, () -> record.elected()
                    .equals(List.of(identities)));
        }

        /** Joins {@code identity} behind {@code leader}, once that leads, and waits until its node is queued. */
        private static Candidacy joinBehind(CuratorCandidate leader, String name, String identity, Record record)
                throws InterruptedException {
            assertThat(leader.tookLeadership(WAIT)).isTrue();
            Candidacy waiting = locker.election(name).join(identity, record.listener());
            Conditions.await("the distlock candidate queued", WAIT, () -> queued(name) == 2);
            return waiting;
        }

        private static int queued(String name) {
            try {
                return curator.getChildren().forPath(electionPath(name)).size();
            } catch (Exception e) {
                return 0;
            }
        }

        private static List<String> participants(CuratorCandidate candidate) throws Exception {
            return candidate.selector.getParticipants().stream()
                    .map(Participant::getId)
                    .toList();
        }

        @Test
        void distlockLeader_isCuratorsLeader_andCuratorLeadsOnceItStepsDown() throws Exception {
            String name = "leads-first";
            Record record = new Record();
            LeaderElection election = locker.election(name);
            try (Candidacy candidacy = election.join("distlock-a", record.listener())) {
                assertThat(candidacy.awaitLeadership(WAIT)).isTrue();
                awaitElected(record, "distlock-a");
                try (CuratorCandidate selector = new CuratorCandidate(name, "curator-b", record)) {
                    Conditions.await("the selector queued", WAIT, () -> queued(name) == 2);
                    Participant leader = selector.selector.getLeader();
                    assertThat(leader.getId()).isEqualTo("distlock-a");
                    assertThat(leader.isLeader()).isTrue();
                    assertThat(participants(selector)).containsExactly("distlock-a", "curator-b");
                    assertThat(selector.tookLeadership(Duration.ofMillis(300))).isFalse();
                    assertThat(selector.selector.hasLeadership()).isFalse();

                    assertThat(candidacy.stepDown()).isTrue();
                    assertThat(selector.tookLeadership(WAIT)).isTrue();
                    assertThat(selector.selector.getLeader().getId()).isEqualTo("curator-b");
                    Conditions.await("the stepped-down candidate queued again", WAIT, () -> queued(name) == 2);
                    assertThat(election.leader()).map(Leader::identity).contains("curator-b");
                    assertThat(candidacy.isLeader()).isFalse();

                    selector.stepDown();
                    assertThat(candidacy.awaitLeadership(WAIT)).isTrue();
                    awaitElected(record, "distlock-a", "curator-b", "distlock-a");
                }
            }
        }

        @Test
        void distlockLeader_thatCloses_handsOverToCurator() throws Exception {
            String name = "closes";
            Record record = new Record();
            Candidacy candidacy = locker.election(name).join("distlock-a", record.listener());
            assertThat(candidacy.awaitLeadership(WAIT)).isTrue();
            try (CuratorCandidate selector = new CuratorCandidate(name, "curator-b", record)) {
                Conditions.await("the selector queued", WAIT, () -> queued(name) == 2);
                assertThat(selector.tookLeadership(Duration.ofMillis(300))).isFalse();
                candidacy.close();
                assertThat(selector.tookLeadership(WAIT)).isTrue();
                assertThat(selector.selector.hasLeadership()).isTrue();
                assertThat(participants(selector)).containsExactly("curator-b");
                assertThat(locker.election(name).leader()).map(Leader::identity).contains("curator-b");
            } finally {
                candidacy.close();
            }
        }

        /**
         * Curator leads: distlock's candidate waits, and {@code leader()} shows Curator's participant id as the identity,
         * its node's {@code czxid} as the epoch and as owner label and owner id in inspection; once Curator returns from
         * {@code takeLeadership}, the distlock candidate is elected and Curator reads it as the leader.
         */
        @Test
        void curatorLeader_isDistlocksLeader_andDistlockIsElectedWhenItReturns() throws Exception {
            String name = "curator-first";
            Record record = new Record();
            LeaderElection election = locker.election(name);
            try (CuratorCandidate selector = new CuratorCandidate(name, "curator-a", record)) {
                try (Candidacy waiting = joinBehind(selector, name, "distlock-b", record)) {
                    assertThat(waiting.awaitLeadership(Duration.ofMillis(300))).isFalse();
                    String node = curator.getChildren().forPath(electionPath(name)).stream()
                            .sorted(ZkAcquisition.BY_SEQUENCE)
                            .findFirst()
                            .map(child -> ZKPaths.makePath(electionPath(name), child))
                            .orElseThrow();
                    long czxid = curator.checkExists().forPath(node).getCzxid();
                    Leader leader = election.leader().orElseThrow();
                    assertThat(leader.identity()).isEqualTo("curator-a");
                    assertThat(leader.epoch()).hasValue(czxid);
                    LockHolder holder = locker.inspect(election.key()).holders().get(0);
                    assertThat(holder.ownerLabel()).isEqualTo("curator-a");
                    assertThat(holder.ownerId()).isEqualTo("curator-a");
                    assertThat(locker.inspect(election.key()).waiting()).hasValue(1);

                    selector.stepDown();
                    assertThat(waiting.awaitLeadership(WAIT)).isTrue();
                    assertThat(election.leader()).map(Leader::identity).contains("distlock-b");
                    assertThat(selector.selector.getLeader().getId()).isEqualTo("distlock-b");
                    awaitElected(record, "curator-a", "distlock-b");
                }
            }
        }

        /**
         * One queue in arrival order with both kinds mixed: distlock, Curator, distlock (another locker), Curator; each
         * leader hands over to the next in line, and both sides list the same participants in the same order.
         */
        @Test
        void mixedCandidates_leadInArrivalOrder() throws Exception {
            String name = "mixed";
            Record record = new Record();
            Candidacy first = locker.election(name).join("distlock-1", record.listener());
            CuratorCandidate second = null;
            Candidacy third = null;
            CuratorCandidate fourth = null;
            try {
                assertThat(first.awaitLeadership(WAIT)).isTrue();
                awaitElected(record, "distlock-1");
                second = new CuratorCandidate(name, "curator-2", record);
                Conditions.await("the second candidate queued", WAIT, () -> queued(name) == 2);
                third = otherLocker.election(name).join("distlock-3", record.listener());
                Conditions.await("the third candidate queued", WAIT, () -> queued(name) == 3);
                fourth = new CuratorCandidate(name, "curator-4", record);
                Conditions.await("the fourth candidate queued", WAIT, () -> queued(name) == 4);
                assertThat(participants(fourth)).containsExactly("distlock-1", "curator-2", "distlock-3", "curator-4");
                assertThat(locker.inspect(LeaderElection.KEY_PREFIX + name).waiting())
                        .hasValue(3);

                first.close();
                assertThat(second.tookLeadership(WAIT)).isTrue();
                assertThat(otherLocker.election(name).leader())
                        .map(Leader::identity)
                        .contains("curator-2");
                assertThat(third.isLeader()).isFalse();

                second.stepDown();
                assertThat(third.awaitLeadership(WAIT)).isTrue();
                awaitElected(record, "distlock-1", "curator-2", "distlock-3");
                assertThat(fourth.selector.getLeader().getId()).isEqualTo("distlock-3");
                assertThat(fourth.tookLeadership(Duration.ofMillis(300))).isFalse();

                third.close();
                assertThat(fourth.tookLeadership(WAIT)).isTrue();
                awaitElected(record, "distlock-1", "curator-2", "distlock-3", "curator-4");
            } finally {
                first.close();
                for (AutoCloseable c : new AutoCloseable[] {second, third, fourth}) {
                    if (c != null) {
                        c.close();
                    }
                }
            }
        }

        /**
         * A Curator participant id shaped like a distlock owner id (32 hex digits, a dot, a label) is shown whole: an
         * election's node holds an identity, never an owner id to take the label from.
         */
        @Test
        void curatorParticipantIdShapedLikeAnOwnerId_isShownWhole() throws Exception {
            String name = "owner-id-shaped";
            String id = "0123456789abcdef0123456789abcdef.worker-7";
            try (CuratorCandidate selector = new CuratorCandidate(name, id, new Record())) {
                assertThat(selector.tookLeadership(WAIT)).isTrue();
                assertThat(locker.election(name).leader()).map(Leader::identity).contains(id);
            }
        }

        /**
         * A lock taken by hand on an election's key leads with its locker's owner label as the identity: the node holds the
         * label alone, which Curator reads as the leader's id and inspection shows as label and owner id. A lock on any
         * other key still holds its owner id.
         */
        @Test
        void lockTakenByHandOnAnElectionsKey_holdsItsLockersLabel() throws Exception {
            String name = "by-hand";
            try (RemoteLocker labelled = RemoteLockers.builder()
                            .uri("zk://" + server.getConnectString() + BASE)
                            .ownerLabel("ops-console")
                            .build();
                    RemoteLock lock = labelled.lock(LeaderElection.KEY_PREFIX + name, WAIT);
                    RemoteLock plain = labelled.lock("plain-" + name, WAIT)) {
                LockHolder holder = locker.inspect(lock.key()).holders().get(0);
                assertThat(holder.ownerLabel()).isEqualTo("ops-console");
                assertThat(holder.ownerId()).isEqualTo("ops-console");
                assertThat(locker.election(name).leader()).map(Leader::identity).contains("ops-console");
                try (CuratorCandidate selector = new CuratorCandidate(name, "curator-b", new Record())) {
                    Conditions.await("the selector queued", WAIT, () -> queued(name) == 2);
                    assertThat(selector.selector.getLeader().getId()).isEqualTo("ops-console");
                }
                LockHolder plainHolder = locker.inspect(plain.key()).holders().get(0);
                assertThat(plainHolder.ownerId()).isEqualTo(plain.ownerId());
                assertThat(plainHolder.ownerLabel()).isEqualTo("ops-console");
            }
        }

        /**
         * The hazard of mixing: Curator's mutex does not watch its own node, so a Curator leader whose node distlock's
         * {@code breakLock} deletes is not told; the distlock candidate behind it is elected, and both lead at once until
         * Curator's {@code takeLeadership} returns. (A distlock leader broken the same way is told, by the watch on its node.)
         */
        @Test
        void curatorLeader_whoseNodeIsBroken_isNotTold_soTwoLeadAtOnce() throws Exception {
            String name = "broken";
            Record record = new Record();
            try (CuratorCandidate selector = new CuratorCandidate(name, "curator-a", record)) {
                Candidacy waiting = joinBehind(selector, name, "distlock-b", record);

                assertThat(locker.breakLock(LeaderElection.KEY_PREFIX + name))
                        .extracting(LockHolder::ownerLabel)
                        .containsExactly("curator-a");
                assertThat(waiting.awaitLeadership(WAIT)).isTrue();
                Thread.sleep(TestTimeouts.scaled(Duration.ofSeconds(1)).toMillis());
                assertThat(selector.selector.hasLeadership()).isTrue();
                assertThat(selector.interrupted).isFalse();
                assertThat(waiting.isLeader()).isTrue();
                awaitElected(record, "curator-a", "distlock-b");
                waiting.close();
            }
        }

        /**
         * Why {@code LeaderSelector} and not {@code LeaderLatch}: the latch's nodes ({@code _c_<uuid>-latch-<seq>}) are
         * sorted by another name than the mutex's {@code -lock-}, so each side puts the other's nodes behind its own, and a
         * latch on the election's path leads beside a distlock leader.
         */
        @Test
        void leaderLatch_onTheElectionsPath_leadsBesideADistlockLeader() throws Exception {
            String name = "latch";
            try (Candidacy candidacy = locker.election(name).join("distlock-a", new Record().listener())) {
                assertThat(candidacy.awaitLeadership(WAIT)).isTrue();
                try (LeaderLatch latch = new LeaderLatch(curator, electionPath(name), "latch-b")) {
                    latch.start();
                    assertThat(latch.await(TestTimeouts.scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                            .isTrue();
                    assertThat(latch.hasLeadership()).isTrue();
                    assertThat(candidacy.isLeader()).isTrue();
                    assertThat(locker.election(name).leader())
                            .map(Leader::identity)
                            .contains("distlock-a");
                }
            }
        }
    }
}
