package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A holder's key deleted out of band ({@code etcdctl del}): the holder, or the group, is told within a bound
 * ({@link OwnKeyWatch}).
 */
class OwnKeyWatchTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    /** Deletes every etcd key of lock {@code key}, as {@code etcdctl del} (with {@code --prefix} in fair mode) would. */
    private void deleteOutOfBand(EtcdLockMode mode, String key) throws Exception {
        inspector
                .getKVClient()
                .delete(
                        bytes(lockPrefix(mode, key)),
                        io.etcd.jetcd.options.DeleteOption.builder()
                                .isPrefix(mode == EtcdLockMode.FAIR)
                                .build())
                .get(10, TimeUnit.SECONDS);
    }

    /** How soon the holder is told that its key was deleted: a watch event, or a check transaction after it. */
    private static final Duration DELETION_NOTICED_WITHIN = EtcdStoreFaults.NOTICED_WITHIN;

    /**
     * The holder's key deleted out of band ({@code etcdctl del}) while its lease lives. The holder
     * watches its own key: within {@link #DELETION_NOTICED_WITHIN} it says {@code isHeld()} false and fires {@code
     * onLost} once, its release answers {@code ALREADY_LOST}, and another locker can take the lock meanwhile.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lockKeyDeletedOutOfBand_holderToldWithinBound(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("deleted");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        try (RemoteLocker holderLocker = locker(mode, ttl);
                RemoteLocker other = locker(mode, ttl)) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> lost.incrementAndGet());
            Thread.sleep(100); // a lock held for a while, not only just granted
            deleteOutOfBand(mode, key);
            assertTrue(
                    Deadlines.within(TestTimeouts.scaled(DELETION_NOTICED_WITHIN), () -> !held.isHeld()),
                    "the holder still says it holds the lock whose key was deleted");
            assertTrue(Deadlines.within(TestTimeouts.scaled(DELETION_NOTICED_WITHIN), () -> lost.get() == 1));
            RemoteLock next = other.tryLock(key).orElseThrow(() -> new AssertionError("the freed key was not free"));
            assertEquals(ReleaseResult.ALREADY_LOST, held.release());
            assertTrue(next.isHeld(), "the old holder's release touched the new holder");
            assertEquals(ReleaseResult.RELEASED, next.release());
            assertEquals(1, lost.get(), "onLost calls");
            assertNothingLeft(mode, key, "release");
        }
    }

    /** Item 6 for a group: one key of a {@code lockAll} deleted out of band makes the group lost. */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void groupMemberKeyDeletedOutOfBand_groupToldWithinBound(EtcdLockMode mode) throws Exception {
        String a = EtcdTesting.unique("group-a");
        String b = EtcdTesting.unique("group-b");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        try (RemoteLocker locker = locker(mode, ttl)) {
            io.distlock.RemoteLockGroup group = locker.lockAll(List.of(a, b), maxWait());
            AtomicInteger lost = new AtomicInteger();
            group.onLost(g -> lost.incrementAndGet());
            deleteOutOfBand(mode, b);
            assertTrue(
                    Deadlines.within(TestTimeouts.scaled(DELETION_NOTICED_WITHIN), () -> !group.isHeld()),
                    "the group still says it holds every lock");
            assertTrue(Deadlines.within(TestTimeouts.scaled(DELETION_NOTICED_WITHIN), () -> lost.get() == 1));
            group.close();
            assertEquals(1, lost.get(), "onLost calls of the group");
            assertNothingLeft(mode, a, "closing the group");
            assertNothingLeft(mode, b, "closing the group");
        }
    }
}
