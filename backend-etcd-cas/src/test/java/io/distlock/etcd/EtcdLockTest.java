package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockBackendException;
import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.spi.BackendConfig;
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
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The etcd backend's own promises on one member: key layout, nothing left behind, lost replies, lost sessions. */
class EtcdLockTest {

    private static final String PREFIX = "/locktest";

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    private static Client inspector;

    @BeforeAll
    static void connectInspector() {
        inspector = Client.builder()
                .endpoints(ETCD.clientEndpoints().toArray(String[]::new))
                .build();
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    private static Duration maxWait() {
        return TestTimeouts.scaled(Duration.ofSeconds(20));
    }

    private static RemoteLocker locker(EtcdLockMode mode, Duration ttl) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(ETCD, PREFIX) + "?mode=" + mode.optionValue())
                .leaseTime(ttl)
                .build();
    }

    private static RemoteLocker proxiedLocker(EtcdLockMode mode, Duration ttl) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.proxiedUri(ETCD, PREFIX) + "?mode=" + mode.optionValue())
                .leaseTime(ttl)
                .build();
    }

    private static LockBackend backend(EtcdLockMode mode, String uri, Duration ttl) {
        BackendConfig config = new BackendConfig(
                URI.create(uri),
                Map.of(EtcdLockBackendProvider.MODE, mode.optionValue()),
                ttl,
                Duration.ofSeconds(10),
                Ticker.system(),
                Clock.systemUTC());
        return new EtcdLockBackendProvider().open(config);
    }

    private static LockRequest request(String key, Duration ttl) {
        return new LockRequest(key, OwnerIds.next(), ttl, reason -> {});
    }

    /** Every etcd key under the test prefix, with its value. */
    private static Map<String, KeyValue> keysUnder(String prefix) throws Exception {
        return inspector
                .getKVClient()
                .get(bytes(prefix), GetOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS)
                .getKvs()
                .stream()
                .collect(Collectors.toMap(kv -> kv.getKey().toString(StandardCharsets.UTF_8), kv -> kv));
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static String lockPrefix(EtcdLockMode mode, String key) {
        return PREFIX + "/" + KeyCodec.encode(key) + (mode == EtcdLockMode.FAIR ? "/" : "");
    }

    private static void assertNothingLeft(EtcdLockMode mode, String key, String after) throws Exception {
        assertThat(keysUnder(lockPrefix(mode, key)))
                .as("etcd keys of '%s' after %s", key, after)
                .isEmpty();
    }

    /** Waits until lock {@code key} has {@code count} etcd keys; fails with {@code what} after {@link #maxWait()}. */
    private static void awaitKeyCount(EtcdLockMode mode, String key, int count, String what) {
        Deadlines.await(
                () -> {
                    try {
                        return keysUnder(lockPrefix(mode, key)).size() == count;
                    } catch (Exception e) {
                        return false;
                    }
                },
                maxWait(),
                () -> what);
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void keys_withSlashSpaceAndNonAscii_mapToOneNameSegment(EtcdLockMode mode) throws Exception {
        String base = EtcdTesting.unique("map");
        String key = base + "/счёт 42 %";
        try (RemoteLocker locker = locker(mode, TestTimeouts.scaled(Duration.ofSeconds(5)));
                RemoteLock parent = locker.lock(base, maxWait());
                RemoteLock lock = locker.lock(key, maxWait())) {
            assertTrue(parent.isHeld() && lock.isHeld(), "a key and the key with '/...' appended are different locks");
            Map<String, KeyValue> keys = keysUnder(PREFIX + "/" + base);
            String name = PREFIX + "/" + base + "%2Fсчёт 42 %25";
            List<String> ours =
                    keys.keySet().stream().filter(k -> k.startsWith(name)).collect(Collectors.toList());
            assertEquals(1, ours.size(), "etcd keys of '" + key + "': " + keys.keySet());
            String etcdKey = ours.get(0);
            if (mode == EtcdLockMode.FAIR) {
                assertThat(etcdKey).matches(java.util.regex.Pattern.quote(name + "/") + "[0-9a-f]+");
            } else {
                assertThat(etcdKey).isEqualTo(name);
            }
            KeyValue kv = keys.get(etcdKey);
            assertEquals(
                    kv.getCreateRevision(),
                    lock.fencingToken().orElseThrow(),
                    "fencing token = the owner key's create revision");
            assertEquals(KeyCodec.decode(name.substring(PREFIX.length() + 1)), key);
        }
        assertThat(keysUnder(PREFIX + "/" + base)).as("after release").isEmpty();
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void failedTryLock_timedOutWait_interruptedWait_leaveNothingBehind(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("left-behind");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        try (RemoteLocker holderLocker = locker(mode, ttl);
                RemoteLocker other = locker(mode, ttl)) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            int holderKeys = keysUnder(lockPrefix(mode, key)).size();
            assertEquals(1, holderKeys, "the holder's key");

            assertFalse(other.tryLock(key).isPresent(), "tryLock of a held key");
            assertEquals(1, keysUnder(lockPrefix(mode, key)).size(), "keys after a failed tryLock");

            try {
                other.lock(key, Duration.ofMillis(300));
                throw new AssertionError("lock of a held key returned");
            } catch (LockTimeoutException expected) {
                // the wait ran out
            }
            assertEquals(1, keysUnder(lockPrefix(mode, key)).size(), "keys after a timed-out wait");

            AtomicReference<Throwable> outcome = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    other.lock(key, maxWait()).close();
                    outcome.set(new AssertionError("acquired a held lock"));
                } catch (Throwable e) {
                    outcome.set(e);
                }
            });
            waiter.start();
            if (mode == EtcdLockMode.FAIR) {
                awaitKeyCount(mode, key, 2, "the waiter's queue key did not appear");
            } else {
                Thread.sleep(200); // let the waiter reach its watch (no key of its own to wait for in cas mode)
            }
            waiter.interrupt();
            waiter.join(maxWait().toMillis());
            assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
            assertEquals(1, keysUnder(lockPrefix(mode, key)).size(), "keys after an interrupted wait");

            assertEquals(ReleaseResult.RELEASED, held.release());
            assertNothingLeft(mode, key, "release");
        }
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void acquireAsync_cancelled_removesWaiterKey_andParksNoThread(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("async");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        java.util.concurrent.ThreadPoolExecutor unused =
                (java.util.concurrent.ThreadPoolExecutor) Executors.newCachedThreadPool();
        try (LockBackend backend = backend(mode, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            Lease held = backend.tryAcquire(request(key, ttl)).orElseThrow();

            List<CompletableFuture<Optional<Lease>>> waiters = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                waiters.add(backend.acquireAsync(request(key, ttl), Deadline.unbounded(Ticker.system()), unused));
            }
            if (mode == EtcdLockMode.FAIR) {
                awaitKeyCount(mode, key, 41, "40 waiters did not queue");
            }
            assertEquals(
                    0, unused.getLargestPoolSize(), "threads of the blocking executor used by native acquireAsync");
            // A waiter parked in the backend stays there; a gRPC thread that runs one of our callbacks may be caught
            // for a moment waiting for a monitor: look again until a snapshot shows none, for a bounded time.
            List<String> parked = backendThreadsNotRunning();
            long lookUntil = System.nanoTime()
                    + TestTimeouts.scaled(Duration.ofSeconds(2)).toNanos();
            while (!parked.isEmpty() && System.nanoTime() - lookUntil < 0) {
                Thread.sleep(20);
                parked = backendThreadsNotRunning();
            }
            assertThat(parked)
                    .as("threads inside the backend while 40 acquireAsync calls wait")
                    .isEmpty();
            for (CompletableFuture<Optional<Lease>> waiter : waiters) {
                assertTrue(waiter.cancel(false));
            }
            awaitKeyCount(mode, key, 1, "the cancelled waiters' keys were not removed");
            assertTrue(backend.release(held));
            assertNothingLeft(mode, key, "cancelled waiters and release");
        } finally {
            unused.shutdownNow();
        }
    }

    /** The threads, other than this test's, with the backend's code on their stack and not running. */
    private static List<String> backendThreadsNotRunning() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getState() != Thread.State.RUNNABLE)
                .filter(e -> java.util.Arrays.stream(e.getValue())
                        .map(StackTraceElement::getClassName)
                        .anyMatch(c -> (c.startsWith("io.distlock.etcd.") || c.startsWith("io.distlock.spi."))
                                && !c.startsWith(EtcdLockTest.class.getName())))
                .map(e -> e.getKey().getName())
                .collect(Collectors.toList());
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void storeRequests_uncontendedAcquireAndRelease_countsTwoTxns(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("count");
        Duration ttl = Duration.ofSeconds(60); // first keep-alive after 20 s: none falls inside the measurement
        try (LockBackend backend = backend(mode, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            long before = backend.storeRequests().orElseThrow();
            Lease lease = backend.acquire(request(key, ttl), Deadline.after(maxWait(), Ticker.system()))
                    .orElseThrow();
            assertTrue(backend.release(lease));
            assertEquals(
                    2,
                    backend.storeRequests().orElseThrow() - before,
                    "one txn to take, one txn to free (a lock released at once never watches its own key)");
        }
    }

    /**
     * Seed 001: a compare-and-set repeated after a lost reply cannot overwrite anybody, and with the owner id read
     * back in the same transaction it recognises its own earlier effect: the attempt is granted, not refused.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void lostReply_onAcquire_retryRecognisesItsOwnPut(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("lost-reply");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        TcpProxy proxy = ETCD.member(0).proxy();
        try (LockBackend backend = backend(mode, EtcdTesting.proxiedUri(ETCD, PREFIX), ttl);
                RemoteLocker other = locker(mode, ttl)) {
            long requestsBefore = backend.storeRequests().orElseThrow();
            proxy.setMode(TcpProxy.Mode.HOLD_REPLIES);
            CompletableFuture<Optional<Lease>> attempt =
                    CompletableFuture.supplyAsync(() -> backend.tryAcquire(request(key, ttl)));
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
                    keys.values().iterator().next().getCreateRevision(),
                    lease.fencingToken().orElseThrow(),
                    "the grant carries the first put's create revision");
            assertFalse(other.tryLock(key).isPresent(), "another locker got the lock granted by the repeat");
            assertTrue(backend.release(lease));
            assertNothingLeft(mode, key, "release");
        } finally {
            proxy.heal();
        }
    }

    /**
     * A lock name is claimed in a session by one attempt at a time, and only that attempt gives it back. An attempt
     * whose put went unanswered gives the name back twice: when the put's late answer lets it delete its key, and when
     * the session's background deletion of that key ends. The second give-back used to free the claim of the attempt
     * that had taken the name since; a third attempt of the locker then took the same queue key and deleted the
     * holder's key as stale (a 100,000-acquisition run: a holder's key deleted under it, the next holder granted with
     * a higher fencing token than its own).
     */
    @Test
    void sessionClaim_givenBackLateByItsFormerOwner_staysWithItsNewOwner() throws Exception {
        Duration ttl = Duration.ofSeconds(5);
        Deadline deadline = Deadline.after(Duration.ofSeconds(10), Ticker.system());
        try (LockBackend backend = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            Sessions sessions = ((EtcdLockBackend) backend).sessions();
            EtcdSession first = sessions.claim("name", "former", deadline).get(10, TimeUnit.SECONDS);
            first.unclaim("name", "former");
            EtcdSession second = sessions.claim("name", "holder", deadline).get(10, TimeUnit.SECONDS);
            assertThat(second).as("the session whose claim was given back").isSameAs(first);

            first.unclaim("name", "former"); // the late second give-back

            EtcdSession third = sessions.claim("name", "third", deadline).get(10, TimeUnit.SECONDS);
            assertThat(third)
                    .as("the session a third attempt gets while the holder has the name")
                    .isNotSameAs(first);
            third.unclaim("name", "third");
            first.unclaim("name", "holder");
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

    /** A locker whose jetcd client passes every request through {@code interceptor}. */
    private static RemoteLocker interceptedLocker(String query, Duration ttl, DelayingInterceptor interceptor) {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(ETCD, PREFIX) + query)
                .provider(new EtcdLockBackendProvider(client -> client.interceptor(interceptor)))
                .leaseTime(ttl)
                .build();
    }

    /**
     * The put of a {@code tryLock} reaches etcd only after the attempt's operation timeout (100 ms),
     * so its clean-up runs while the put is still in flight. The put must not land after the clean-up's delete and
     * leave a key bound to the locker's live lease: another locker gets the lock, and nothing is left behind.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void tryLock_putLandingAfterOperationTimeout_leavesNothingBehind(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("late-put");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        try (DelayingInterceptor delay = new DelayingInterceptor();
                RemoteLocker slow =
                        interceptedLocker("?mode=" + mode.optionValue() + "&operationTimeout=100ms", ttl, delay);
                RemoteLocker other = locker(mode, ttl)) {
            delay.delayNext("Txn", Duration.ofMillis(500));
            assertThat(slow.tryLock(key))
                    .as("tryLock whose put is answered after 500 ms")
                    .isEmpty();
            delay.delayedCallClosed().get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            try (RemoteLock lock = other.lock(key, TestTimeouts.scaled(Duration.ofSeconds(3)))) {
                assertThat(keysUnder(lockPrefix(mode, key)).values())
                        .as("etcd keys of '%s' while the other locker holds it", key)
                        .extracting(kv -> kv.getValue().toString(StandardCharsets.UTF_8))
                        .containsExactly(lock.ownerId());
            }
            assertNothingLeft(mode, key, "the other locker's release");
        }
    }

    /**
     * A waiter reads its predecessor (fair mode) or the held key (cas mode) at one revision, then creates a watch that
     * starts at etcd's revision of that moment. Here the holder's release lands exactly between the two: the waiter's
     * watch creation is held back in its client until the release has been answered, so no watch event will ever tell
     * of the deletion. The waiter is woken all the same, by the check its watch's creation notice calls for.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void waiter_keyDeletedBetweenItsReadAndItsWatch_isWokenAnyway(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("gap");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        try (DelayingInterceptor hold = new DelayingInterceptor();
                RemoteLocker holder = locker(mode, ttl);
                RemoteLocker waiter = interceptedLocker("?mode=" + mode.optionValue(), ttl, hold)) {
            RemoteLock held = holder.lock(key, maxWait());
            CompletableFuture<Void> letWatchGo = hold.holdNext("Watch");
            CompletableFuture<RemoteLock> waiting = waiter.lockAsync(key, maxWait());
            hold.heldCallMade().get(maxWait().toMillis(), TimeUnit.MILLISECONDS); // read done, watch on its way
            assertEquals(ReleaseResult.RELEASED, held.release());
            letWatchGo.complete(null);
            Duration bound = TestTimeouts.scaled(Duration.ofSeconds(5));
            assertTrue(
                    Deadlines.within(bound, waiting::isDone),
                    "the waiter was not woken within " + bound + " by a release between its read and its watch");
            RemoteLock next = waiting.join();
            assertEquals(ReleaseResult.RELEASED, next.release());
            assertNothingLeft(mode, key, "release");
        }
    }

    /**
     * A {@code tryLock} interrupted in flight, at 60 points from before its put to after its grant,
     * leaves nothing behind: a grant that races with the interrupt is released, not dropped with the key held by the
     * locker's live lease. After more than one lease, three {@code lock(key, 3s)} of another locker succeed.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void tryLock_interruptedInFlight_leavesKeyFree(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("interrupted-try");
        Duration ttl = Duration.ofSeconds(1);
        try (RemoteLocker trying = locker(mode, ttl);
                RemoteLocker other = locker(mode, TestTimeouts.scaled(Duration.ofSeconds(5)))) {
            trying.tryLock(key).orElseThrow().release(); // sessions and connections warm
            for (int i = 0; i < 60; i++) {
                AtomicReference<Optional<RemoteLock>> got = new AtomicReference<>(Optional.empty());
                Thread t = new Thread(() -> {
                    try {
                        got.set(trying.tryLock(key));
                    } catch (RuntimeException interrupted) {
                        // the interrupt ended it: a LockBackendException saying so
                    }
                });
                t.start();
                long until = System.nanoTime() + i * 50_000L; // 0 to 3 ms: before, during and after the round trip
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                t.interrupt();
                t.join(maxWait().toMillis());
                got.get().ifPresent(RemoteLock::release);
            }
            Thread.sleep(EtcdTesting.sessionTimeout(ttl).toMillis()); // more than one lease
            for (int i = 0; i < 3; i++) {
                try (RemoteLock lock = other.lock(key, TestTimeouts.scaled(Duration.ofSeconds(3)))) {
                    assertTrue(lock.isHeld());
                }
            }
            assertNothingLeft(mode, key, "60 interrupted tryLocks and three locks");
        }
    }

    /** Deletes every etcd key of lock {@code key}, as {@code etcdctl del} (with {@code --prefix} in fair mode) would. */
    private static void deleteOutOfBand(EtcdLockMode mode, String key) throws Exception {
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

    /** How many leases etcd has: its {@code LeaseLeases} call, through the member's JSON gateway (jetcd lacks it). */
    private static int leasesInEtcd() throws Exception {
        java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(
                                        URI.create("http://" + ETCD.node(0).endpoint() + "/v3/lease/leases"))
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        return response.body().split("\"ID\"", -1).length - 1;
    }

    /**
     * In fair mode a session queues for a name once, so K concurrent {@code lockAsync} calls of one
     * locker on one key need K sessions (etcd leases, each kept alive). Once they are served and released, the extra
     * ones are revoked: the locker is back to one lease.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void concurrentLockAsync_onOneKey_leaveNoExtraLeases(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("leases");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        int k = 5;
        try (RemoteLocker holderLocker = locker(mode, ttl);
                RemoteLocker waiters = locker(mode, ttl)) {
            int baseline = leasesInEtcd();
            RemoteLock held = holderLocker.lock(key, maxWait());
            List<CompletableFuture<ReleaseResult>> pending = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                pending.add(waiters.lockAsync(key, maxWait()).thenApply(RemoteLock::release)); // in grant order
            }
            if (mode == EtcdLockMode.FAIR) {
                awaitKeyCount(mode, key, k + 1, k + " waiters did not queue");
                assertEquals(baseline + k - 1, leasesInEtcd(), "leases while " + k + " waiters of one locker queue");
            }
            held.release();
            for (CompletableFuture<ReleaseResult> next : pending) {
                assertEquals(ReleaseResult.RELEASED, next.get(maxWait().toMillis(), TimeUnit.MILLISECONDS));
            }
            assertTrue(
                    Deadlines.within(maxWait(), () -> {
                        try {
                            return leasesInEtcd() == baseline;
                        } catch (Exception e) {
                            return false;
                        }
                    }),
                    () -> "leases after every waiter was served and released: " + leasesCount() + ", expected "
                            + baseline);
            assertNothingLeft(mode, key, "every waiter released");
        }
    }

    private static String leasesCount() {
        try {
            return String.valueOf(leasesInEtcd());
        } catch (Exception e) {
            return e.toString();
        }
    }

    /**
     * The validity a lock reports is the send time of the grant (or the last answered keep-alive) plus
     * the TTL, less a drift allowance of TTL/100 + 2 ms (as ZooKeeper's and Redlock's): the leader counts the TTL on
     * its own monotonic clock from its receipt, and the two clocks may run at slightly different rates (NTP slews a
     * monotonic clock by up to 500 ppm). Measured on a ticker that does not move, so the arithmetic is exact.
     */
    @Test
    void validUntil_isSendTimePlusTtl_lessDriftAllowance() throws Exception {
        Duration ttl = Duration.ofSeconds(30);
        io.distlock.toolkit.ManualTicker ticker = new io.distlock.toolkit.ManualTicker();
        long sent = ticker.read();
        BackendConfig config = new BackendConfig(
                URI.create(EtcdTesting.uri(ETCD, PREFIX)),
                Map.of(),
                ttl,
                Duration.ofSeconds(10),
                ticker,
                Clock.systemUTC());
        try (LockBackend backend = new EtcdLockBackendProvider().open(config)) {
            Lease lease = backend.tryAcquire(request(EtcdTesting.unique("validity"), ttl))
                    .orElseThrow();
            long drift = ttl.toNanos() / 100 + TimeUnit.MILLISECONDS.toNanos(2);
            assertEquals(
                    sent + ttl.toNanos() - drift, lease.validUntilNanos(), "validity = sent + TTL - (TTL/100 + 2 ms)");
            assertTrue(backend.release(lease));
        }
    }

    /** How a test cuts the waiting locker off from etcd. */
    enum Outage {
        /** The member stops: connections are refused, and the waiter's watch ends with an error. */
        STORE_STOPPED,
        /** The waiter's connection is blackholed: nothing is answered, nothing fails, the watch stays silent. */
        PARTITIONED
    }

    /**
     * For a wait already parked on a watch when etcd stops answering: {@code lock(k)} and {@code
     * lock(k, long)} fail with {@code LockBackendException} about {@code connectTimeout} after that, instead of waiting
     * through the outage.
     */
    @ParameterizedTest
    @EnumSource(Outage.class)
    void parkedWait_storeStopsAnswering_failsWithBackendException_withinConnectTimeout(Outage outage) throws Exception {
        EtcdLockMode mode = EtcdLockMode.FAIR;
        String key = EtcdTesting.unique("parked");
        Duration connectTimeout = TestTimeouts.scaled(Duration.ofSeconds(2));
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        String uri =
                outage == Outage.PARTITIONED ? EtcdTesting.proxiedUri(ETCD, PREFIX) : EtcdTesting.uri(ETCD, PREFIX);
        try (RemoteLocker holderLocker = locker(mode, ttl);
                RemoteLocker waiting = RemoteLockers.builder()
                        .uri(uri + "?mode=" + mode.optionValue())
                        .leaseTime(ttl)
                        .connectTimeout(connectTimeout)
                        .build()) {
            holderLocker.lock(key, maxWait());
            CompletableFuture<Object> unbounded = CompletableFuture.supplyAsync(() -> outcome(() -> waiting.lock(key)));
            CompletableFuture<Object> bounded = CompletableFuture.supplyAsync(
                    () -> outcome(() -> waiting.lock(key, maxWait().multipliedBy(3))));
            awaitKeyCount(mode, key, 3, "the two waiters did not queue");
            Thread.sleep(300); // both parked on their watches
            long stopped = System.nanoTime();
            if (outage == Outage.PARTITIONED) {
                ETCD.member(0).partition();
            } else {
                ETCD.member(0).stop();
            }
            Duration bound = connectTimeout.plus(TestTimeouts.scaled(Duration.ofSeconds(3)));
            for (CompletableFuture<Object> wait : List.of(unbounded, bounded)) {
                Object result = wait.get(bound.toMillis() + maxWait().toMillis(), TimeUnit.MILLISECONDS);
                Duration took = Duration.ofNanos(System.nanoTime() - stopped);
                assertThat(result)
                        .as("a parked wait after etcd stopped answering (%s)", outage)
                        .isInstanceOf(io.distlock.LockBackendException.class);
                assertThat(took)
                        .as("a parked wait failed %s after etcd stopped answering (%s)", took, outage)
                        .isLessThanOrEqualTo(bound);
            }
        } finally {
            ETCD.member(0).heal();
        }
    }

    /**
     * A wait shorter than the operation timeout, against a store that answers nothing: the request is bounded by the
     * wait's deadline, so its own timeout and the wait's fire at the same instant. The store's silence must decide ({@code
     * LockBackendException}), every time, not a give-up that reads as "not granted in time". Repeated, because the
     * two timers race: the deadline's check could see the request just failed by its timeout, before that failure's
     * own continuation had ended the attempt, and gave up (seen once in a CI run of the kit's store-down test).
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void shortWait_storeSilent_failsWithBackendException_everyTime(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("silent");
        Duration wait = TestTimeouts.scaled(Duration.ofMillis(100));
        int leasesBefore = leasesInEtcd();
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(EtcdTesting.proxiedUri(ETCD, PREFIX) + "?mode=" + mode.optionValue())
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(2)))
                // also how long a put left unanswered is waited for before the call fails (the first call's)
                .connectTimeout(TestTimeouts.scaled(Duration.ofSeconds(1)))
                .build()) {
            locker.lock(key, maxWait()).release(); // connected
            ETCD.member(0).partition();
            for (int i = 0; i < 5; i++) {
                Object outcome = outcome(() -> locker.lock(key, wait));
                assertThat(outcome)
                        .as("lock(k, %s) number %d with etcd silent", wait, i + 1)
                        .isInstanceOf(io.distlock.LockBackendException.class);
            }
            ETCD.member(0).heal(); // before the close, which would wait for etcd to free the attempts' leases
        } finally {
            ETCD.member(0).heal();
        }
        // Grants held back by the partition reach etcd on healing, after their callers gave up: such leases have no key
        // and end with their TTL. Wait for them, so that the lease counts of other tests start from a quiet store.
        assertTrue(
                Deadlines.within(maxWait(), () -> {
                    try {
                        return leasesInEtcd() <= leasesBefore;
                    } catch (Exception e) {
                        return false;
                    }
                }),
                () -> "leases after the silent waits: " + leasesCount() + ", before them " + leasesBefore);
    }

    /** What a call ended with: its value or its exception. */
    private static Object outcome(java.util.concurrent.Callable<?> call) {
        try {
            return call.call();
        } catch (Exception e) {
            return e;
        }
    }

    /**
     * The holder's connection is cut (partition) for longer than the TTL: its keep-alives stop, it reports the lock
     * lost (from its own validity, measured from before each keep-alive was sent), etcd expires the lease and a waiter
     * gets the lock — and the history shows no second holder while the first still believed it held the lock.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void connectionCutPastTtl_reportsLost_andNoOverlapInHistory(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("cut");
        Duration ttl = Duration.ofSeconds(2);
        HistoryRecorder history = HistoryRecorder.inMemory();
        TcpProxy proxy = ETCD.member(0).proxy();
        try (RemoteLocker holderLocker = proxiedLocker(mode, ttl);
                RemoteLocker waiterLocker = locker(mode, TestTimeouts.scaled(Duration.ofSeconds(5)))) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            history.acquired(held);
            AtomicInteger lost = new AtomicInteger();
            held.onLost(l -> {
                history.lost(l);
                lost.incrementAndGet();
            });
            CompletableFuture<RemoteLock> next = CompletableFuture.supplyAsync(() -> {
                try {
                    RemoteLock lock = waiterLocker.lock(key, maxWait());
                    history.acquired(lock);
                    return lock;
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            proxy.blackhole();
            RemoteLock second = next.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(Deadlines.within(maxWait(), () -> lost.get() > 0), "the cut-off holder was never told");
            assertFalse(held.isHeld());
            history.releasing(second);
            second.close();
            proxy.heal();
            assertEquals(ReleaseResult.ALREADY_LOST, held.release());
            assertEquals(1, lost.get(), "onLost calls");
            HistoryChecker.assertConsistent(history.events());
        } finally {
            proxy.heal();
        }
    }

    /**
     * etcd's {@code TestMutexLockSessionExpired}: a fair waiter's own lease is revoked (by another client, as etcd's
     * test closes the waiter's session) while it waits behind a holder. Its queue key went with the lease, and with it
     * its place in line: the waiting call fails with a {@link LockBackendException} saying so, rather than queueing
     * again at the back under a new lease, and nothing of it is left. Either while the holder still holds (told by its
     * keep-alive), or when the holder releases right after the revocation (etcd's test's order: told when it looks).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void fairWaiter_ownLeaseRevokedWhileWaiting_failsAndLeavesNoEntry(boolean holderReleases) throws Exception {
        String key = EtcdTesting.unique("session-expired");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker holder = locker(EtcdLockMode.FAIR, ttl);
                RemoteLocker waiter = locker(EtcdLockMode.FAIR, ttl)) {
            RemoteLock held = holder.lock(key, maxWait());
            CompletableFuture<RemoteLock> waiting = waiter.lockAsync(key, maxWait());
            awaitKeyCount(EtcdLockMode.FAIR, key, 2, "the waiter's queue key behind the holder's");
            KeyValue waiterKey = keysUnder(lockPrefix(EtcdLockMode.FAIR, key)).values().stream()
                    .filter(kv ->
                            !kv.getValue().toString(StandardCharsets.UTF_8).equals(held.ownerId()))
                    .findFirst()
                    .orElseThrow();
            inspector.getLeaseClient().revoke(waiterKey.getLease()).get(10, TimeUnit.SECONDS);
            if (holderReleases) {
                assertEquals(ReleaseResult.RELEASED, held.release());
            }
            Duration bound = EtcdTesting.sessionTimeout(ttl).plus(TestTimeouts.scaled(Duration.ofSeconds(2)));
            assertTrue(
                    Deadlines.within(bound, waiting::isDone),
                    "the waiter whose lease was revoked had not returned within " + bound);
            assertThatThrownBy(waiting::join)
                    .hasCauseInstanceOf(LockBackendException.class)
                    .cause()
                    .hasMessageContaining("expired while waiting")
                    .hasMessageContaining("place in the queue");
            Map<String, KeyValue> left = keysUnder(lockPrefix(EtcdLockMode.FAIR, key));
            if (holderReleases) {
                assertThat(left)
                        .as("keys after the release and the failed waiter")
                        .isEmpty();
            } else {
                assertTrue(held.isHeld(), "the holder lost its lock to a waiter's expired lease");
                assertThat(left.values())
                        .as("keys of '%s' while the holder holds, after the waiter failed", key)
                        .extracting(kv -> kv.getValue().toString(StandardCharsets.UTF_8))
                        .containsExactly(held.ownerId());
                assertEquals(ReleaseResult.RELEASED, held.release());
            }
            waiter.tryLock(key).orElseThrow().release(); // the waiter's locker works on, under a new lease
            assertNothingLeft(EtcdLockMode.FAIR, key, "the waiter's failure and both releases");
        }
    }

    /**
     * In {@code cas} mode a waiter has no key and no place in line: it watches the holder's key and tries again when
     * it goes. Its locker's lease revoked while it waits (by another client) costs it nothing: it gets the lock at the
     * release, under a new lease, and nothing is left.
     */
    @Test
    void casWaiter_ownLeaseRevokedWhileWaiting_getsTheLockUnderANewLease() throws Exception {
        String key = EtcdTesting.unique("cas-session-expired");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        try (RemoteLocker holder = locker(EtcdLockMode.CAS, ttl);
                RemoteLocker waiter = locker(EtcdLockMode.CAS, ttl)) {
            long waiterLease;
            try (RemoteLock probe = waiter.tryLock(key).orElseThrow()) {
                waiterLease = keysUnder(lockPrefix(EtcdLockMode.CAS, key))
                        .values()
                        .iterator()
                        .next()
                        .getLease();
            }
            RemoteLock held = holder.lock(key, maxWait());
            CompletableFuture<RemoteLock> waiting = waiter.lockAsync(key, maxWait());
            inspector.getLeaseClient().revoke(waiterLease).get(10, TimeUnit.SECONDS);
            assertEquals(ReleaseResult.RELEASED, held.release());
            RemoteLock next = waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(next.isHeld(), "the waiter's lock is not held");
            assertThat(keysUnder(lockPrefix(EtcdLockMode.CAS, key)).values())
                    .extracting(KeyValue::getLease)
                    .singleElement()
                    .isNotEqualTo(waiterLease);
            assertEquals(ReleaseResult.RELEASED, next.release());
            assertNothingLeft(EtcdLockMode.CAS, key, "the waiter's release");
        }
    }
}
