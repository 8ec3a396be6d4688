package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteSemaphore;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Read-write locks and semaphores on etcd (fair mode): the grant rule on the create-revision queue, the layout apart
 * from the locks', a crashed holder's permit freed, a mismatched N refused, and nothing left behind; and the same
 * kinds in cas mode, on a holders' record ({@link CasRecord}).
 */
class EtcdSharedKindsTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    private static final Duration TTL = TestTimeouts.scaled(Duration.ofSeconds(5));

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    private static String readWriteDir(String key) {
        return PREFIX + "/" + FairQueue.READ_WRITE + "/" + KeyCodec.encode(key) + "/";
    }

    private static String semaphoreDir(String key) {
        return PREFIX + "/" + FairQueue.SEMAPHORE + "/" + KeyCodec.encode(key) + "/";
    }

    private void awaitKeys(String dir, int count, String what) {
        Deadlines.await(
                () -> {
                    try {
                        return keysUnder(dir).size() == count;
                    } catch (Exception e) {
                        return false;
                    }
                },
                maxWait(),
                () -> what + ": " + keysNow(dir));
    }

    private String keysNow(String dir) {
        try {
            return keysUnder(dir).keySet().toString();
        } catch (Exception e) {
            return e.toString();
        }
    }

    @Test
    void readers_share_andAWriter_excludesEveryone() throws Exception {
        String key = EtcdTesting.unique("rw");
        try (RemoteLocker one = locker(EtcdLockMode.FAIR, TTL);
                RemoteLocker other = locker(EtcdLockMode.FAIR, TTL)) {
            RemoteLock read = one.readWriteLock(key).readLock().tryLock().orElseThrow();
            RemoteLock alsoRead = other.readWriteLock(key)
                    .readLock()
                    .tryLockAsync()
                    .get(10, TimeUnit.SECONDS)
                    .orElseThrow();
            assertThat(read.kind()).isEqualTo(LockKind.READ);
            Map<String, KeyValue> keys = keysUnder(readWriteDir(key));
            assertThat(keys.keySet())
                    .as("two readers' keys")
                    .hasSize(2)
                    .allMatch(k -> k.matches(Pattern.quote(readWriteDir(key) + "read/") + "[0-9a-f]+"));
            assertThat(other.readWriteLock(key).writeLock().tryLockAsync().get(10, TimeUnit.SECONDS))
                    .as("a writer beside readers")
                    .isEmpty();
            read.release();
            alsoRead.release();
            RemoteLock write = other.readWriteLock(key).writeLock().tryLock().orElseThrow();
            assertThat(write.kind()).isEqualTo(LockKind.WRITE);
            assertThat(write.fencingToken().orElseThrow())
                    .as("the writer's token, after the readers'")
                    .isGreaterThan(alsoRead.fencingToken().orElseThrow());
            assertThat(one.readWriteLock(key).readLock().tryLock())
                    .as("a reader beside a writer")
                    .isEmpty();
            assertThat(one.readWriteLock(key).writeLock().tryLock())
                    .as("a writer beside a writer")
                    .isEmpty();
            write.release();
        }
        assertThat(keysUnder(readWriteDir(key))).as("after release").isEmpty();
    }

    @Test
    void aWaitingWriter_isServedBefore_laterReaders() throws Exception {
        String key = EtcdTesting.unique("writer-first");
        try (RemoteLocker one = locker(EtcdLockMode.FAIR, TTL);
                RemoteLocker other = locker(EtcdLockMode.FAIR, TTL)) {
            RemoteLock reader = one.readWriteLock(key).readLock().lock(maxWait());
            CompletableFuture<RemoteLock> writer =
                    other.readWriteLock(key).writeLock().lockAsync(maxWait());
            awaitKeys(readWriteDir(key), 2, "the writer's queue key");
            assertThat(other.readWriteLock(key).readLock().tryLockAsync().get(10, TimeUnit.SECONDS))
                    .as("a reader that comes after a waiting writer")
                    .isEmpty();
            CompletableFuture<RemoteLock> laterReader =
                    one.readWriteLock(key).readLock().lockAsync(maxWait());
            awaitKeys(readWriteDir(key), 3, "the later reader's queue key");
            reader.release();
            RemoteLock write = writer.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(laterReader)
                    .as("the later reader, while the writer holds")
                    .isNotDone();
            write.release();
            laterReader.get(maxWait().toMillis(), TimeUnit.MILLISECONDS).release();
        }
        assertThat(keysUnder(readWriteDir(key))).as("after release").isEmpty();
    }

    @Test
    void aSemaphore_grantsNPermitsAcrossLockers_andNoMore_andAReleaseAheadLetsTheNextIn() throws Exception {
        String key = EtcdTesting.unique("sem");
        List<RemoteLocker> lockers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                lockers.add(locker(EtcdLockMode.FAIR, TTL));
            }
            List<RemoteLock> permits = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                permits.add(lockers.get(i).semaphore(key, 2).lock(maxWait()));
            }
            assertThat(permits.get(0).kind()).isEqualTo(LockKind.PERMIT);
            assertThat(keysUnder(semaphoreDir(key)).keySet())
                    .as("the permits' keys carry N")
                    .allMatch(k -> k.matches(Pattern.quote(semaphoreDir(key) + "2/") + "[0-9a-f]+"));
            RemoteSemaphore third = lockers.get(2).semaphore(key, 2);
            assertThat(third.tryLock()).as("a third permit of two").isEmpty();
            CompletableFuture<RemoteLock> waiting = third.lockAsync(maxWait());
            awaitKeys(semaphoreDir(key), 3, "the waiter's queue key");
            permits.get(0).release(); // the first holder, not the key just ahead of the waiter
            RemoteLock granted = waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(lockers.get(0).semaphore(key, 2).tryLock())
                    .as("a third permit of two, after a release and a grant")
                    .isEmpty();
            granted.release();
            permits.get(1).release();
        } finally {
            lockers.forEach(RemoteLocker::close);
        }
        assertThat(keysUnder(semaphoreDir(key))).as("after release").isEmpty();
    }

    @Test
    void aHolderWhoseLeaseIsRevoked_freesItsPermit_forTheWaiter() throws Exception {
        String key = EtcdTesting.unique("sem-crash");
        try (RemoteLocker crashing = locker(EtcdLockMode.FAIR, TTL);
                RemoteLocker waiter = locker(EtcdLockMode.FAIR, TTL)) {
            RemoteLock held = crashing.semaphore(key, 1).lock(maxWait());
            CompletableFuture<RemoteLock> waiting = waiter.semaphore(key, 1).lockAsync(maxWait());
            awaitKeys(semaphoreDir(key), 2, "the waiter's queue key");
            KeyValue holderKey = keysUnder(semaphoreDir(key)).values().stream()
                    .filter(kv -> kv.getCreateRevision() == held.fencingToken().orElseThrow())
                    .findFirst()
                    .orElseThrow();
            inspector.getLeaseClient().revoke(holderKey.getLease()).get(10, TimeUnit.SECONDS); // as a crash's expiry
            RemoteLock granted = waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(granted.isHeld()).isTrue();
            Deadlines.await(() -> !held.isHeld(), maxWait(), () -> "the revoked holder was not told");
            granted.release();
        }
        assertThat(keysUnder(semaphoreDir(key))).as("after release").isEmpty();
    }

    @Test
    void aSemaphoreAskedWithAnotherN_isRefused_leavingNothingBehind() throws Exception {
        String key = EtcdTesting.unique("sem-n");
        try (RemoteLocker one = locker(EtcdLockMode.FAIR, TTL);
                RemoteLocker other = locker(EtcdLockMode.FAIR, TTL)) {
            try (RemoteLock permit = one.semaphore(key, 2).lock(maxWait())) {
                Map<String, KeyValue> before = keysUnder(semaphoreDir(key));
                assertThatThrownBy(() -> other.semaphore(key, 3).tryLock())
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("in use with 2 permits")
                        .hasMessageContaining("asks for it with 3");
                assertThatThrownBy(() -> other.semaphore(key, 1).lock(maxWait()))
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("asks for it with 1");
                assertThat(keysUnder(semaphoreDir(key)).keySet())
                        .as("after the refusals")
                        .isEqualTo(before.keySet());
                assertThat(permit.isHeld()).isTrue();
            }
            other.semaphore(key, 3).tryLock().orElseThrow().release();
        }
        assertThat(keysUnder(semaphoreDir(key))).as("after release").isEmpty();
    }

    @Test
    void cancelledAndTimedOutWaits_ofEveryKind_leaveNothingBehind() throws Exception {
        String key = EtcdTesting.unique("kinds-cancel");
        try (RemoteLocker one = locker(EtcdLockMode.FAIR, TTL);
                RemoteLocker other = locker(EtcdLockMode.FAIR, TTL)) {
            RemoteLock write = one.readWriteLock(key).writeLock().lock(maxWait());
            RemoteLock permit = one.semaphore(key, 1).lock(maxWait());

            CompletableFuture<RemoteLock> reader =
                    other.readWriteLock(key).readLock().lockAsync(maxWait());
            CompletableFuture<RemoteLock> writer =
                    other.readWriteLock(key).writeLock().lockAsync(maxWait());
            CompletableFuture<RemoteLock> waitingPermit =
                    other.semaphore(key, 1).lockAsync(maxWait());
            awaitKeys(readWriteDir(key), 3, "the waiters' queue keys");
            awaitKeys(semaphoreDir(key), 2, "the permit waiter's queue key");
            reader.cancel(true);
            writer.cancel(true);
            waitingPermit.cancel(true);
            awaitKeys(readWriteDir(key), 1, "the cancelled waiters' keys");
            awaitKeys(semaphoreDir(key), 1, "the cancelled permit's key");

            assertThatThrownBy(() -> other.readWriteLock(key).readLock().lock(Duration.ofMillis(300)))
                    .isInstanceOf(io.distlock.LockTimeoutException.class);
            assertThatThrownBy(() -> other.semaphore(key, 1).lock(Duration.ofMillis(300)))
                    .isInstanceOf(io.distlock.LockTimeoutException.class);
            assertThat(keysUnder(readWriteDir(key)))
                    .as("after a timed-out read")
                    .hasSize(1);
            assertThat(keysUnder(semaphoreDir(key)))
                    .as("after a timed-out permit")
                    .hasSize(1);
            write.release();
            permit.release();
        }
        assertThat(keysUnder(readWriteDir(key))).isEmpty();
        assertThat(keysUnder(semaphoreDir(key))).isEmpty();
    }

    @Test
    void theLock_theReadWriteLock_andTheSemaphore_onOneKey_areApart() throws Exception {
        String key = EtcdTesting.unique("apart");
        try (RemoteLocker one = locker(EtcdLockMode.FAIR, TTL);
                RemoteLocker other = locker(EtcdLockMode.FAIR, TTL);
                RemoteLock lock = one.lock(key, maxWait());
                RemoteLock write = other.readWriteLock(key).writeLock().lock(maxWait());
                RemoteLock permit = other.semaphore(key, 1).lock(maxWait())) {
            assertThat(List.of(lock.kind(), write.kind(), permit.kind()))
                    .containsExactly(LockKind.LOCK, LockKind.WRITE, LockKind.PERMIT);
            assertThat(keysUnder(lockPrefix(EtcdLockMode.FAIR, key)))
                    .as("the lock's own directory holds the lock's key alone, as etcdctl lock sees it")
                    .hasSize(1);
            assertThat(keysUnder(readWriteDir(key))).hasSize(1);
            assertThat(keysUnder(semaphoreDir(key))).hasSize(1);
            assertThat(one.tryLock(FairQueue.READ_WRITE))
                    .as("a lock named like the read-write directory is a lock of its own")
                    .isPresent()
                    .get()
                    .satisfies(RemoteLock::release);
        }
    }

    private static String casRecord(String space, String key) {
        return PREFIX + "/" + space + "/" + KeyCodec.encode(key);
    }

    @Test
    void casMode_offersEveryKind_unfairly() {
        try (RemoteLocker cas = locker(EtcdLockMode.CAS, TTL)) {
            assertThat(cas.capabilities().kinds())
                    .containsExactly(LockKind.LOCK, LockKind.READ, LockKind.WRITE, LockKind.PERMIT);
            assertThat(cas.capabilities().fair()).isFalse();
        }
    }

    @Test
    void casMode_readersShareTheRecord_aWriterIsKeptOut_andTheLastReleaseRemovesTheRecord() throws Exception {
        String key = EtcdTesting.unique("cas-rw");
        String record = casRecord(FairQueue.READ_WRITE, key);
        String holders = CasRecord.holdersDir(record);
        try (RemoteLocker one = locker(EtcdLockMode.CAS, TTL);
                RemoteLocker other = locker(EtcdLockMode.CAS, TTL);
                RemoteLocker third = locker(EtcdLockMode.CAS, TTL)) {
            RemoteLock read = one.readWriteLock(key).readLock().tryLock().orElseThrow();
            RemoteLock alsoRead = other.readWriteLock(key).readLock().tryLock().orElseThrow();
            assertThat(keysUnder(holders).keySet())
                    .as("two readers' keys, each on its locker's lease")
                    .hasSize(2)
                    .allMatch(k -> k.startsWith(holders + "read/"));
            assertThat(keysUnder(holders).values()).allMatch(kv -> kv.getLease() != 0);
            assertThat(keysUnder(record).get(record))
                    .as("the record beside the holders")
                    .isNotNull();
            assertThat(keysUnder(readWriteDir(key)))
                    .as("nothing in the fair mode's directory")
                    .isEmpty();
            assertThat(third.readWriteLock(key).writeLock().tryLock())
                    .as("a writer beside readers")
                    .isEmpty();
            CompletableFuture<RemoteLock> writer =
                    third.readWriteLock(key).writeLock().lockAsync(maxWait());
            read.release();
            assertThat(one.readWriteLock(key).writeLock().tryLock())
                    .as("a writer beside the one reader left")
                    .isEmpty();
            alsoRead.release();
            RemoteLock write = writer.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(write.fencingToken().orElseThrow())
                    .as("the writer's token, after the readers'")
                    .isGreaterThan(alsoRead.fencingToken().orElseThrow());
            assertThat(one.readWriteLock(key).readLock().tryLock())
                    .as("a reader beside a writer")
                    .isEmpty();
            write.release();
        }
        assertThat(keysUnder(record))
                .as("record and holders after the last release")
                .isEmpty();
    }

    /**
     * A cas writer that gave up waiting takes its mark back; when that delete does not reach etcd (held in the client
     * past its deadline here), the session repeats it with its keep-alives, and readers get in while the writer's
     * locker stays open. The mark is bound to the session's lease, which lives as long as the locker: left behind, it
     * would keep every later reader out.
     */
    @Test
    void casMode_aWritersMarkWhoseWithdrawalFails_isDeletedInTheBackground() throws Exception {
        String key = EtcdTesting.unique("cas-mark");
        String marks = casRecord(FairQueue.READ_WRITE, key) + CasRecord.WAITS + "/";
        try (DelayingInterceptor interceptor = new DelayingInterceptor();
                RemoteLocker writing = interceptedLocker("?mode=cas&operationTimeout=500ms", TTL, interceptor);
                RemoteLocker reading = locker(EtcdLockMode.CAS, TTL);
                RemoteLocker later = locker(EtcdLockMode.CAS, TTL)) {
            RemoteLock reader = reading.readWriteLock(key).readLock().lock(maxWait());
            CompletableFuture<RemoteLock> writer =
                    writing.readWriteLock(key).writeLock().lockAsync(TestTimeouts.scaled(Duration.ofSeconds(2)));
            awaitKeys(marks, 1, "the waiting writer's mark");
            CompletableFuture<Void> neverSent = interceptor.holdNext("Txn"); // the withdrawal, never let go
            assertThat(writer)
                    .as("the writer's wait beside the reader")
                    .failsWithin(maxWait())
                    .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .withCauseInstanceOf(LockTimeoutException.class);
            assertThat(interceptor.heldCallMade())
                    .as("the mark's withdrawal, held in the client")
                    .isDone();
            awaitKeys(marks, 0, "the mark, deleted by the writer's session");
            assertThat(later.readWriteLock(key).readLock().tryLock())
                    .as("a reader after the mark went")
                    .isPresent()
                    .get()
                    .satisfies(RemoteLock::release);
            assertThat(neverSent).isNotDone();
            reader.release();
        }
    }

    @Test
    void casMode_aSemaphore_grantsN_refusesAnotherN_andARevokedHoldersPermitGoesToTheWaiter() throws Exception {
        String key = EtcdTesting.unique("cas-sem");
        String record = casRecord(FairQueue.SEMAPHORE, key);
        try (RemoteLocker crashing = locker(EtcdLockMode.CAS, TTL);
                RemoteLocker other = locker(EtcdLockMode.CAS, TTL);
                RemoteLocker third = locker(EtcdLockMode.CAS, TTL)) {
            RemoteLock dying = crashing.semaphore(key, 2).lock(maxWait());
            RemoteLock alive = other.semaphore(key, 2).lock(maxWait());
            assertThat(third.semaphore(key, 2).tryLock())
                    .as("a third permit of two")
                    .isEmpty();
            assertThatThrownBy(() -> third.semaphore(key, 3).tryLock())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessageContaining("in use with 2 permits")
                    .hasMessageContaining("asks for it with 3");
            assertThat(keysUnder(CasRecord.holdersDir(record)).keySet())
                    .as("after the refusals, the two holders' slots of N = 2, and no record")
                    .containsExactlyInAnyOrder(
                            CasRecord.holdersDir(record) + "2/0", CasRecord.holdersDir(record) + "2/1");
            assertThat(keysUnder(record).get(record)).isNull();
            CompletableFuture<RemoteLock> waiting = third.semaphore(key, 2).lockAsync(maxWait());
            KeyValue dyingKey = keysUnder(CasRecord.holdersDir(record)).values().stream()
                    .filter(kv -> kv.getCreateRevision() == dying.fencingToken().orElseThrow())
                    .findFirst()
                    .orElseThrow();
            inspector.getLeaseClient().revoke(dyingKey.getLease()).get(10, TimeUnit.SECONDS); // as a crash's expiry
            RemoteLock granted = waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(granted.fencingToken().orElseThrow())
                    .isGreaterThan(alive.fencingToken().orElseThrow());
            Deadlines.await(() -> !dying.isHeld(), maxWait(), () -> "the revoked holder was not told");
            granted.release();
            alive.release();
        }
        assertThat(keysUnder(record))
                .as("record and holders after the last release")
                .isEmpty();
    }
}
