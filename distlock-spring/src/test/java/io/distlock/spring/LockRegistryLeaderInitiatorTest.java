package io.distlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} on two registries, each with its own locker (two
 * processes), against a real ZooKeeper server.
 */
class LockRegistryLeaderInitiatorTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String ROLE = "scheduler";

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private final Queue<AbstractLeaderEvent> events = new ConcurrentLinkedQueue<>();
    private RemoteLocker lockerA;
    private RemoteLocker lockerB;
    private LockRegistryLeaderInitiator a;
    private LockRegistryLeaderInitiator b;

    @BeforeEach
    void start() {
        lockerA = RemoteLockers.open("zk://" + ZK.connectString() + "/leader");
        lockerB = RemoteLockers.open("zk://" + ZK.connectString() + "/leader");
        a = initiator(lockerA, "a");
        b = initiator(lockerB, "b");
        a.start();
        b.start();
    }

    private LockRegistryLeaderInitiator initiator(RemoteLocker locker, String id) {
        LockRegistryLeaderInitiator initiator =
                new LockRegistryLeaderInitiator(new RemoteLockRegistry(locker), new DefaultCandidate(id, ROLE));
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(20);
        initiator.setLeaderEventPublisher(new DefaultLeaderEventPublisher(e -> events.add((AbstractLeaderEvent) e)));
        return initiator;
    }

    @AfterEach
    void stop() {
        a.stop();
        b.stop();
        lockerA.close();
        lockerB.close();
    }

    private LockRegistryLeaderInitiator awaitOneLeader() throws InterruptedException {
        Deadlines.await(() -> isLeader(a) || isLeader(b), WAIT, () -> "a leader elected");
        assertThat(Deadlines.within(TestTimeouts.scaled(Duration.ofSeconds(1)), () -> isLeader(a) && isLeader(b)))
                .as("both leaders at once over ten heartbeats")
                .isFalse();
        assertThat(isLeader(a) ^ isLeader(b)).as("exactly one leader").isTrue();
        return isLeader(a) ? a : b;
    }

    private static boolean isLeader(LockRegistryLeaderInitiator initiator) {
        return initiator.getContext().isLeader();
    }

    @Test
    void oneLeader_andWhenItsLockIsLost_leadershipMoves() throws Exception {
        LockRegistryLeaderInitiator leader = awaitOneLeader();
        LockRegistryLeaderInitiator follower = leader == a ? b : a;

        ZooKeeperLockRegistryTest.deleteHolderNode(ZK, "/leader/" + ROLE);

        Deadlines.await(() -> isLeader(follower) && !isLeader(leader), WAIT, () -> "leadership moved to the follower");
        assertThat(events).anySatisfy(e -> assertThat(e)
                .isInstanceOf(OnRevokedEvent.class)
                .extracting(AbstractLeaderEvent::getSource)
                .isSameAs(leader));
        assertThat(grantedTo()).containsExactly(leader, follower);
        awaitOneLeader();
    }

    @Test
    void stoppingTheLeader_handsLeadershipOver() throws Exception {
        LockRegistryLeaderInitiator leader = awaitOneLeader();
        LockRegistryLeaderInitiator follower = leader == a ? b : a;

        leader.stop();

        Deadlines.await(() -> isLeader(follower), WAIT, () -> "leadership handed to the follower");
        assertThat(isLeader(leader)).isFalse();
        assertThat(grantedTo()).containsExactly(leader, follower);
    }

    private List<Object> grantedTo() {
        return events.stream()
                .filter(OnGrantedEvent.class::isInstance)
                .map(AbstractLeaderEvent::getSource)
                .toList();
    }
}
