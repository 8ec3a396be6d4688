package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LeaderElection;
import io.distlock.LockBackendException;
import io.distlock.LockKind;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.TcpProxy;
import io.distlock.toolkit.OwnerIds;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Requests repeated after their reply was lost (seed 001): an acquisition recognises its own put, a release its own
 * delete, and a late delete never touches the next holder.
 */
class EtcdLostReplyTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    /**
     * Seed 001: a compare-and-set repeated after a lost reply cannot overwrite anybody, and with the owner id read
     * back in the same transaction it recognises its own earlier effect: the attempt is granted, not refused.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lostReply_onAcquire_retryRecognisesItsOwnPut(EtcdLockMode mode) throws Exception {
        String ownerId = OwnerIds.next();
        lostReplyOnAcquire(mode, EtcdTesting.unique("lost-reply"), ownerId, ownerId);
    }

    /**
     * The same for an election's key in fair mode, which holds the candidate's identity, not the owner id (as etcd's
     * {@code concurrency.Election} stores a proposal): the repeat recognises its own key all the same.
     */
    @Test
    void lostReply_onAnElectionsAcquire_retryRecognisesItsOwnPut() throws Exception {
        lostReplyOnAcquire(
                EtcdLockMode.FAIR,
                LeaderElection.KEY_PREFIX + EtcdTesting.unique("lost-reply"),
                OwnerIds.next("node-a"),
                "node-a");
    }

    /** An acquire of {@code key} as {@code ownerId} whose applied put's reply is lost; its key holds {@code value}. */
    private void lostReplyOnAcquire(EtcdLockMode mode, String key, String ownerId, String value) throws Exception {
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        TcpProxy proxy = ETCD.member(0).proxy();
        try (LockBackend backend = backend(mode, EtcdTesting.proxiedUri(ETCD, PREFIX), ttl);
                RemoteLocker other = locker(mode, ttl)) {
            long requestsBefore = backend.storeRequests().orElseThrow();
            proxy.setMode(TcpProxy.Mode.HOLD_REPLIES);
            CompletableFuture<Optional<Lease>> attempt = CompletableFuture.supplyAsync(
                    () -> backend.tryAcquire(new LockRequest(key, ownerId, ttl, r -> {})));
            Deadlines.await(
                    () -> {
                        try {
                            return !keysUnder(lockPrefix(mode, key)).isEmpty();
                        } catch (Exception e) {
                            return false;
                        }
                    },
                    maxWait(),
                    () -> "the put never reached etcd");
            long firstPut =
                    keysUnder(lockPrefix(mode, key)).values().iterator().next().getCreateRevision();
            proxy.drop(); // the reply of the applied put is lost with the connection
            proxy.heal();
            Lease lease = attempt.get(maxWait().toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow(() -> new AssertionError("the retried put did not recognise its own key"));
            assertThat(backend.storeRequests().orElseThrow() - requestsBefore)
                    .as("requests: the lost one and its repeat")
                    .isGreaterThanOrEqualTo(2);
            Map<String, KeyValue> keys = keysUnder(lockPrefix(mode, key));
            assertEquals(1, keys.size(), "one key, not two: " + keys.keySet());
            assertEquals(
                    value, keys.values().iterator().next().getValue().toString(StandardCharsets.UTF_8), "its value");
            assertEquals(
                    firstPut,
                    lease.fencingToken().orElseThrow(),
                    "the grant carries the first put's create revision (its key kept, not put again)");
            assertEquals(firstPut, keys.values().iterator().next().getCreateRevision(), "the key is the first put's");
            assertFalse(other.tryLock(key).isPresent(), "another locker got the lock granted by the repeat");
            assertTrue(backend.release(lease));
            assertNothingLeft(mode, key, "release");
        } finally {
            proxy.heal();
        }
    }

    /**
     * A cas writer that waits puts its mark in the {@code Else} of each refused compare-and-set. When the reply of its
     * applied grant is lost, the repeat is refused (the grant moved the version), puts the mark again, and finds its
     * own key: granted. That mark must go too; it is bound to the session's lease, which lives as long as the locker,
     * and would keep every later reader out (a minority-killed run once starved a reader so).
     */
    @Test
    void lostReply_onAWaitingWritersGrant_leavesNoMarkBehind() throws Exception {
        String key = EtcdTesting.unique("lost-reply-writer");
        String record = PREFIX + "/" + FairQueue.READ_WRITE + "/" + KeyCodec.encode(key);
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        TcpProxy proxy = ETCD.member(0).proxy();
        try (LockBackend backend = backend(EtcdLockMode.CAS, EtcdTesting.proxiedUri(ETCD, PREFIX), ttl);
                RemoteLocker other = locker(EtcdLockMode.CAS, ttl)) {
            proxy.setMode(TcpProxy.Mode.HOLD_REPLIES);
            LockRequest write = new LockRequest(key, OwnerIds.next(), ttl, r -> {}, LockKind.WRITE, 1);
            CompletableFuture<Optional<Lease>> attempt = CompletableFuture.supplyAsync(() -> {
                try {
                    return backend.acquire(write, Deadline.after(maxWait(), Ticker.system()));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Deadlines.await(
                    () -> {
                        try {
                            return keysUnder(CasRecord.holdersDir(record)).size() == 1;
                        } catch (Exception e) {
                            return false;
                        }
                    },
                    maxWait(),
                    () -> "the writer's grant never reached etcd");
            proxy.drop(); // the reply of the applied grant is lost with the connection
            proxy.heal();
            Lease lease = attempt.get(maxWait().toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow(() -> new AssertionError("the repeat did not recognise the writer's own key"));
            String marks = record + CasRecord.WAITS + "/";
            awaitNoMark(marks, "the writer holds, and its mark is still there: ");
            assertTrue(backend.release(lease));
            assertReaderGetsIn(other, key);
        } finally {
            proxy.heal();
        }
    }

    /**
     * A waiting writer's grant sent again in a new raft term: etcd answered another request in a higher term while the
     * grant's first send was unanswered, so the backend sent it again. The first send had been applied, the repeat was
     * refused (the grant moved the version), and the first send's answer came first: the writer holds, and never reads
     * the repeat's answer. The repeat's {@code Else} must not have put the writer's mark: bound to the session's lease,
     * which lives as long as the locker, it would keep every later reader out.
     */
    @Test
    void grantAnsweredAfterItsRepeatInANewTerm_leavesNoMarkBehind() throws Exception {
        String key = EtcdTesting.unique("new-term-writer");
        String marks = PREFIX + "/" + FairQueue.READ_WRITE + "/" + KeyCodec.encode(key) + CasRecord.WAITS + "/";
        String holders = CasRecord.holdersDir(PREFIX + "/" + FairQueue.READ_WRITE + "/" + KeyCodec.encode(key));
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(6));
        try (DelayingInterceptor interceptor = new DelayingInterceptor();
                RemoteLocker writer = interceptedLocker("?mode=cas", ttl, interceptor);
                RemoteLocker reader = locker(EtcdLockMode.CAS, ttl)) {
            writer.readWriteLock(key).writeLock().lock(maxWait()).release(); // the session and its term, known
            DelayingInterceptor.Held first = interceptor.holdAnswerOfNext("Txn");
            CompletableFuture<RemoteLock> attempt = CompletableFuture.supplyAsync(() -> {
                try {
                    return writer.readWriteLock(key).writeLock().lock(maxWait());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            first.answered().get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(1, keysUnder(holders).size(), "the grant's first send was applied");
            DelayingInterceptor.Held repeat = interceptor.holdAnswerOfNext("Txn");
            ETCD.member(0).restart(); // a new raft term: the keep-alive's answer in it sends the grant again
            repeat.answered().get(maxWait().toMillis(), TimeUnit.MILLISECONDS); // applied, refused
            first.release().complete(null);
            RemoteLock lock = attempt.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            repeat.release().complete(null);
            awaitNoMark(marks, "the writer holds, and the mark its repeat put is still there: ");
            lock.release();
            assertReaderGetsIn(reader, key);
        }
    }

    /** Waits until no writer's mark is left under {@code marks}; fails with {@code what} and the marks. */
    private void awaitNoMark(String marks, String what) {
        Deadlines.await(
                () -> {
                    try {
                        return keysUnder(marks).isEmpty();
                    } catch (Exception e) {
                        return false;
                    }
                },
                maxWait(),
                () -> what + keysNow(marks));
    }

    /** A reader of {@code key} through {@code locker} is granted at once (and released). */
    private static void assertReaderGetsIn(RemoteLocker locker, String key) {
        assertTrue(
                locker.readWriteLock(key)
                        .readLock()
                        .tryLock()
                        .map(r -> {
                            r.release();
                            return true;
                        })
                        .orElse(false),
                "a reader after the writer's release");
    }

    private String keysNow(String prefix) {
        try {
            return keysUnder(prefix).keySet().toString();
        } catch (Exception e) {
            return e.toString();
        }
    }

    /**
     * Seed 001 says a versioned CAS may be repeated until a real answer comes. It may — nothing is overwritten — but
     * the repeat of an applied CAS answers "version mismatch": a caller that trusts that answer believes it failed,
     * and the lock it actually took stays behind, held by nobody, until its lease runs out. This is why our
     * transaction reads the key back ({@code Else get}) and compares the owner id.
     */
    @Test
    void seed001_casRepeatedAfterLostReply_withoutReadBack_reportsFailureAndLeavesLockBehind() throws Exception {
        String key = PREFIX + "/" + EtcdTesting.unique("seed-flaw");
        TcpProxy proxy = ETCD.member(0).proxy();
        try (Client client = Client.builder()
                .endpoints(ETCD.proxiedClientEndpoints().toArray(String[]::new))
                .build()) {
            long lease =
                    client.getLeaseClient().grant(30).get(10, TimeUnit.SECONDS).getID();
            ByteSequence owner = bytes("owner-1");
            java.util.function.Supplier<CompletableFuture<TxnResponse>> casVersion0 = () -> client.getKVClient()
                    .txn()
                    .If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(
                            bytes(key),
                            owner,
                            PutOption.builder().withLeaseId(lease).build()))
                    .commit();
            proxy.setMode(TcpProxy.Mode.HOLD_REPLIES);
            CompletableFuture<TxnResponse> first = casVersion0.get();
            Deadlines.await(
                    () -> {
                        try {
                            return !keysUnder(key).isEmpty();
                        } catch (Exception e) {
                            return false;
                        }
                    },
                    maxWait(),
                    () -> "the CAS never reached etcd");
            proxy.drop();
            proxy.heal();
            assertThat(catchFailure(first)).as("the first CAS's reply is lost").isNotNull();
            TxnResponse repeat = repeatUntilAnswered(casVersion0);
            assertFalse(repeat.isSucceeded(), "the repeated CAS on version 0 reports failure");
            KeyValue left = keysUnder(key).get(key);
            assertThat(left)
                    .as("yet the lock the caller thinks it failed to take is in etcd")
                    .isNotNull();
            assertEquals("owner-1", left.getValue().toString(StandardCharsets.UTF_8));
            client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
        } finally {
            proxy.heal();
        }
    }

    private static Throwable catchFailure(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            return e;
        }
    }

    private static TxnResponse repeatUntilAnswered(java.util.function.Supplier<CompletableFuture<TxnResponse>> call)
            throws Exception {
        long end = System.nanoTime() + maxWait().toNanos();
        while (true) {
            try {
                return call.get().get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (System.nanoTime() > end) {
                    throw e;
                }
                Thread.sleep(50); // the client reconnects
            }
        }
    }

    /**
     * A repeated release whose first reply was lost finds the key gone while the session lives: released. In fair mode
     * the first send is a plain delete and the repeat a guarded one; in cas mode both are guarded.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lostReply_onRelease_repeatReportsReleased(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("lost-release");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        TcpProxy proxy = ETCD.member(0).proxy();
        try (LockBackend backend = backend(mode, EtcdTesting.proxiedUri(ETCD, PREFIX), ttl)) {
            Lease lease = backend.tryAcquire(request(key, ttl)).orElseThrow();
            proxy.setMode(TcpProxy.Mode.HOLD_REPLIES);
            CompletableFuture<Boolean> release = CompletableFuture.supplyAsync(() -> backend.release(lease));
            awaitKeyCount(mode, key, 0, "the release never reached etcd");
            proxy.drop();
            proxy.heal();
            assertTrue(release.get(maxWait().toMillis(), TimeUnit.MILLISECONDS), "release after a lost reply");
        } finally {
            proxy.heal();
        }
    }

    /**
     * A fair-mode release first sends a plain delete of the key named after the session's lease. Here that delete
     * leaves the client only after the release has timed out, after the session's background delete has removed the
     * key, and after the same locker has taken the lock again. The late delete must find nothing of the new holder's.
     * It would if the name were given back to the session before every send of the release had settled: the next
     * attempt would put the same key in the same session, and the late delete would remove it under its holder.
     */
    @Test
    void fairRelease_plainDeleteLandingLate_neverDeletesTheNextHoldersKey() throws Exception {
        String key = EtcdTesting.unique("late-delete");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        Duration operationTimeout = TestTimeouts.scaled(Duration.ofSeconds(1));
        try (DelayingInterceptor hold = new DelayingInterceptor();
                RemoteLocker locker = interceptedLocker(
                        "?mode=fair&operationTimeout=" + operationTimeout.toMillis() + "ms", ttl, hold)) {
            RemoteLock first = locker.lock(key, maxWait());
            CompletableFuture<Void> letDeleteGo = hold.holdNext("DeleteRange");
            assertThatThrownBy(first::release)
                    .as("a release whose delete gets no answer within the operation timeout")
                    .isInstanceOf(LockBackendException.class);
            awaitKeyCount(EtcdLockMode.FAIR, key, 0, "the session never deleted the key of the failed release");
            RemoteLock second = locker.lock(key, maxWait());
            letDeleteGo.complete(null);
            hold.delayedCallClosed().get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertThat(keysUnder(lockPrefix(EtcdLockMode.FAIR, key)).values())
                    .as("etcd keys of '%s' after the first release's delete landed", key)
                    .extracting(kv -> kv.getValue().toString(StandardCharsets.UTF_8))
                    .containsExactly(second.ownerId());
            assertTrue(second.isHeld(), "the second holder still holds the lock");
            assertEquals(ReleaseResult.RELEASED, second.release());
            assertNothingLeft(EtcdLockMode.FAIR, key, "the second release");
        }
    }
}
