package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Candidacy;
import io.distlock.Leader;
import io.distlock.LeaderElection;
import io.distlock.LeadershipListener;
import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fair election is etcd's {@code concurrency.Election}, key for key: {@code etcdctl elect <prefix>/%25election%2F
 * <name> <proposal>} and distlock candidates of election {@code <name>} on a locker with prefix {@code <prefix>} queue
 * in one line and see one leader, both ways; {@code etcdctl elect -l} prints distlock's leader's identity, and {@link
 * LeaderElection#leader()} shows etcdctl's proposal. Each test runs the real {@code etcdctl} ({@link Etcdctl}).
 */
class EtcdctlElectInteropTest {

    private static final String PREFIX = "/elect-interop";

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    private static Duration maxWait() {
        return TestTimeouts.scaled(Duration.ofSeconds(20));
    }

    /** How long a candidate must be seen not to lead, or etcdctl not to print, while another leads. */
    private static Duration stillWaiting() {
        return TestTimeouts.scaled(Duration.ofMillis(500));
    }

    private static RemoteLocker locker() {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(ETCD, PREFIX))
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .build();
    }

    /** The name {@code etcdctl elect} is given for distlock's election {@code name}: the documented one, spelt out. */
    private static String etcdctlName(String name) {
        return PREFIX + "/%25election%2F" + name;
    }

    private static Candidacy join(RemoteLocker locker, String name, String identity) {
        return locker.election(name).join(identity, LeadershipListener.of(term -> {}, (term, reason) -> {}));
    }

    /** The election's queue keys in etcd, distlock's and etcdctl's: {@code <prefix>/%25election%2F<name>/<lease>}. */
    private static List<String> keys(String name) {
        return EtcdTesting.lockKeys(ETCD, PREFIX, LeaderElection.KEY_PREFIX + name, EtcdLockMode.FAIR);
    }

    private static void awaitKeys(String name, int count, String what) {
        Deadlines.await(() -> keys(name).size() == count, maxWait(), () -> what + ": keys " + keys(name));
    }

    private static Optional<String> leader(LeaderElection election) {
        return election.leader().map(Leader::identity);
    }

    private static void awaitLeader(LeaderElection election, String identity) {
        Deadlines.await(
                () -> leader(election).equals(Optional.of(identity)),
                maxWait(),
                () -> "distlock's leader(), expected " + identity + ": " + election.leader());
    }

    /**
     * The election's lock as inspected: one holder, whose owner label is {@code identity} (its key's value) and whose
     * owner id is its etcd key, which names its lease.
     */
    private static void assertHolder(RemoteLocker locker, String name, String identity) {
        LockState state = locker.inspect(LeaderElection.KEY_PREFIX + name);
        assertEquals(1, state.holders().size(), "holders: " + state);
        LockHolder holder = state.holders().get(0);
        assertEquals(identity, holder.ownerLabel(), "the leader's owner label: " + holder);
        assertTrue(holder.ownerId().matches(etcdctlName(name) + "/[0-9a-f]+"), "the leader's owner id: " + holder);
    }

    private static void assertStillWaiting(BooleanSupplier waiting, String what) throws InterruptedException {
        assertTrue(Deadlines.holdsFor(stillWaiting(), waiting), what);
    }

    @Test
    void distlockLeads_etcdctlWaitsAndSeesIt_thenLeadsOnStepDown() throws Exception {
        String name = EtcdTesting.unique("distlock-first");
        try (RemoteLocker locker = locker();
                Candidacy candidacy = join(locker, name, "node-a")) {
            assertTrue(candidacy.awaitLeadership(maxWait()), "distlock's candidate did not lead an empty election");
            try (Etcdctl campaign = Etcdctl.start(ETCD, "elect", etcdctlName(name), "p")) {
                awaitKeys(name, 2, "etcdctl elect did not queue behind distlock's key: " + campaign.output());
                assertStillWaiting(() -> campaign.output().isEmpty(), "etcdctl elected while distlock leads");
                try (Etcdctl observer = Etcdctl.start(ETCD, "elect", "-l", etcdctlName(name))) {
                    observer.awaitLine("node-a", maxWait(), "etcdctl elect -l did not show distlock's leader");
                    assertFalse(observer.printed("p"), "etcdctl elect -l showed the waiter: " + observer.output());
                }
                assertEquals(Optional.of("node-a"), leader(locker.election(name)), "distlock's leader()");
                assertHolder(locker, name, "node-a");
                try (Etcdctl withdrawing = Etcdctl.start(ETCD, "elect", etcdctlName(name), "q")) {
                    awaitKeys(name, 3, "a second etcdctl elect did not queue: " + withdrawing.output());
                    withdrawing.interrupt();
                    withdrawing.awaitExit(maxWait());
                    awaitKeys(name, 2, "etcdctl elect interrupted while waiting left its key");
                }

                candidacy.close();

                campaign.awaitLine("p", maxWait(), "etcdctl elect was not elected when distlock stepped down");
                assertTrue(
                        campaign.output().get(0).matches(etcdctlName(name) + "/[0-9a-f]+"),
                        "etcdctl prints its own key first: " + campaign.output());
                awaitLeader(locker.election(name), "p");
                campaign.interrupt();
                assertEquals(0, campaign.awaitExit(maxWait()), "etcdctl's exit code; output " + campaign.output());
            }
        }
        assertEquals(List.of(), keys(name), "keys left behind");
    }

    @Test
    void etcdctlLeads_distlockWaits_thenLeadsWhenEtcdctlResigns() throws Exception {
        String name = EtcdTesting.unique("etcdctl-first");
        try (RemoteLocker locker = locker();
                Etcdctl campaign = Etcdctl.start(ETCD, "elect", etcdctlName(name), "p")) {
            campaign.awaitLine("p", maxWait(), "etcdctl elect was not elected in an empty election");
            LeaderElection election = locker.election(name);
            assertEquals(Optional.of("p"), leader(election), "distlock's leader() while etcdctl leads");
            assertHolder(locker, name, "p");
            try (Candidacy candidacy = join(locker, name, "node-b")) {
                awaitKeys(name, 2, "distlock's candidate did not queue behind etcdctl's key");
                assertStillWaiting(() -> !candidacy.isLeader(), "distlock's candidate led while etcdctl leads");
                assertEquals(Optional.of("p"), leader(election), "distlock's leader() with distlock waiting");
                // on a locker of its own, so its key is put with the locker's lease, which outlives the candidacy
                try (RemoteLocker other = locker();
                        Candidacy withdrawing = join(other, name, "node-c")) {
                    awaitKeys(name, 3, "a second distlock candidate did not queue");
                    withdrawing.close();
                    awaitKeys(name, 2, "a distlock candidate that left while waiting left its key");
                }

                campaign.interrupt(); // etcdctl resigns: deletes its key
                assertEquals(0, campaign.awaitExit(maxWait()), "etcdctl's exit code; output " + campaign.output());

                assertTrue(candidacy.awaitLeadership(maxWait()), "distlock's candidate did not lead after etcdctl");
                assertEquals(Optional.of("node-b"), leader(election), "distlock's leader() after etcdctl resigned");
            }
        }
        assertEquals(List.of(), keys(name), "keys left behind");
    }

    /**
     * distlock A leads; etcdctl E1, distlock B and etcdctl E2 queue in that order; each hands over to the next in the
     * queue, whatever its kind.
     */
    @Test
    void handOver_withBothKindsQueued_followsTheQueueOrder() throws Exception {
        String name = EtcdTesting.unique("mixed-queue");
        try (RemoteLocker lockerA = locker();
                RemoteLocker lockerB = locker();
                Candidacy a = join(lockerA, name, "node-a")) {
            assertTrue(a.awaitLeadership(maxWait()), "distlock's A did not lead an empty election");
            try (Etcdctl e1 = Etcdctl.start(ETCD, "elect", etcdctlName(name), "e1")) {
                awaitKeys(name, 2, "etcdctl E1 did not queue");
                try (Candidacy b = join(lockerB, name, "node-b")) {
                    awaitKeys(name, 3, "distlock's B did not queue");
                    try (Etcdctl e2 = Etcdctl.start(ETCD, "elect", etcdctlName(name), "e2")) {
                        awaitKeys(name, 4, "etcdctl E2 did not queue");
                        LeaderElection election = lockerB.election(name);

                        a.close();
                        e1.awaitLine("e1", maxWait(), "E1 did not lead after A");
                        awaitLeader(election, "e1");
                        assertStillWaiting(() -> !b.isLeader() && e2.output().isEmpty(), "B or E2 led while E1 leads");

                        e1.interrupt();
                        assertTrue(b.awaitLeadership(maxWait()), "B did not lead after E1");
                        assertEquals(Optional.of("node-b"), leader(election), "distlock's leader() after E1");
                        assertStillWaiting(() -> e2.output().isEmpty(), "E2 elected while B leads: " + e2.output());

                        b.close();
                        e2.awaitLine("e2", maxWait(), "E2 did not lead after B");
                        awaitLeader(election, "e2");
                        e2.interrupt();
                        assertEquals(0, e2.awaitExit(maxWait()), "E2's exit code; output " + e2.output());
                    }
                }
                assertEquals(0, e1.awaitExit(maxWait()), "E1's exit code; output " + e1.output());
            }
        }
        assertEquals(List.of(), keys(name), "keys left behind");
    }
}
