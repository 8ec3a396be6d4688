package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockHolder;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asking a holder to let go ({@link EtcdInspection#requestRelease}): a put on the holder's key that keeps its value and
 * lease, seen by the holder's watch on its own key ({@link OwnKeyWatch}) and told once per request; measured from the
 * request's call to the listener (its look-up and put included).
 */
class EtcdReleaseRequestTest extends OneMemberEtcdTests {

    private static final Logger log = LoggerFactory.getLogger(EtcdReleaseRequestTest.class);

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    /** How long a test waits for a request to reach a holder; the bound measured is logged, and far below. */
    private static final Duration TOLD_WITHIN = Duration.ofSeconds(2);

    private static final Duration TTL = Duration.ofSeconds(6);

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    /**
     * Rounds of one lock: a request right after the grant (before the holder's watch on its key starts, at most 200 ms
     * later: the watch's start reads the key's version) and one while the watch runs. Each reaches the holder's
     * listener once, within the bound; the holder keeps the lock and its key its value and lease; the request returns
     * the holder. Logs the median and maximum time from the request's call to the listener (its look-up and put included).
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void requestRelease_heldKey_holderToldOncePerRequestWithinBound(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("asked");
        List<Long> fresh = new ArrayList<>();
        List<Long> watched = new ArrayList<>();
        try (RemoteLocker holderLocker = locker(mode, TTL);
                RemoteLocker asker = locker(mode, TTL)) {
            for (int round = 0; round < 5; round++) {
                RemoteLock held = holderLocker.lock(key, maxWait());
                List<Long> told = new CopyOnWriteArrayList<>();
                held.onReleaseRequested(l -> told.add(System.nanoTime()));
                KeyValue before = onlyKey(mode, key);

                fresh.add(askAndMeasure(asker, key, held, told, 1));
                Thread.sleep(500); // the holder's watch on its key runs now
                watched.add(askAndMeasure(asker, key, held, told, 2));

                assertTrue(Deadlines.holdsFor(Duration.ofMillis(300), () -> told.size() == 2), "listener calls");
                assertTrue(held.isHeld(), "a request took the lock away");
                KeyValue after = onlyKey(mode, key);
                assertEquals(before.getValue(), after.getValue(), "the key's value");
                assertEquals(before.getLease(), after.getLease(), "the key's lease");
                assertEquals(before.getCreateRevision(), after.getCreateRevision(), "the key's create revision");
                assertEquals(3, after.getVersion(), "the key's version: the grant and two requests");
                assertEquals(ReleaseResult.RELEASED, held.release());
                assertNothingLeft(mode, key, "release");
            }
        }
        log.info(
                "etcd {}: a release request reached the holder in median {} ms (max {}) while its key's watch ran,"
                        + " median {} ms (max {}) right after the grant; 5 rounds each",
                mode.optionValue(),
                millis(median(watched)),
                millis(max(watched)),
                millis(median(fresh)),
                millis(max(fresh)));
    }

    /** Asks the holders of {@code key}, expecting {@code held}; waits for the listener's {@code n}th call. */
    private static long askAndMeasure(RemoteLocker asker, String key, RemoteLock held, List<Long> told, int n)
            throws InterruptedException {
        long sent = System.nanoTime();
        List<LockHolder> asked = asker.requestRelease(key);
        assertThat(asked).hasSize(1);
        assertEquals(held.ownerId(), asked.get(0).ownerId());
        assertEquals(held.fencingToken(), asked.get(0).fencingToken());
        assertTrue(
                Deadlines.within(TestTimeouts.scaled(TOLD_WITHIN), () -> told.size() >= n),
                "request " + n + " did not reach the holder");
        assertEquals(n, told.size(), "listener calls after request " + n);
        return told.get(n - 1) - sent;
    }

    /**
     * A request for a free key writes nothing and returns no holder; the next holder of the key hears nothing; and a
     * holder with no listener keeps the lock, its listener registered later hearing the request kept for it.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void requestRelease_freeKey_writesNothingAndReachesNoLaterHolder(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("free");
        try (RemoteLocker holderLocker = locker(mode, TTL);
                RemoteLocker asker = locker(mode, TTL)) {
            assertThat(asker.requestRelease(key)).isEmpty();
            assertNothingLeft(mode, key, "a request on the free key");

            RemoteLock held = holderLocker.lock(key, maxWait());
            List<Long> told = new CopyOnWriteArrayList<>();
            held.onReleaseRequested(l -> told.add(System.nanoTime()));
            assertTrue(
                    Deadlines.holdsFor(TestTimeouts.scaled(Duration.ofSeconds(1)), told::isEmpty),
                    "the later holder was told of a request made while the key was free");
            assertEquals(1, onlyKey(mode, key).getVersion(), "the holder's key was put again");
            assertEquals(ReleaseResult.RELEASED, held.release());

            RemoteLock deaf = holderLocker.lock(key, maxWait());
            Thread.sleep(400); // its watch runs
            assertThat(asker.requestRelease(key)).hasSize(1);
            assertTrue(Deadlines.holdsFor(Duration.ofMillis(500), deaf::isHeld), "a holder without a listener let go");
            List<Long> late = new CopyOnWriteArrayList<>();
            deaf.onReleaseRequested(l -> late.add(System.nanoTime()));
            assertTrue(Deadlines.within(TestTimeouts.scaled(TOLD_WITHIN), () -> late.size() == 1));
            assertEquals(ReleaseResult.RELEASED, deaf.release());
        }
    }

    /**
     * Two readers of a read-write lock and a permit of a semaphore on the same key, and a writer waiting: a request
     * names the three holders and reaches each once (their keys differ in each layout); the waiting writer is not a
     * holder, is not named, and once granted hears nothing of it.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void requestRelease_sharedKinds_everyHolderAskedOnce(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("shared");
        try (RemoteLocker one = locker(mode, TTL);
                RemoteLocker other = locker(mode, TTL);
                RemoteLocker third = locker(mode, TTL)) {
            List<RemoteLock> holders = List.of(
                    one.readWriteLock(key).readLock().lock(maxWait()),
                    other.readWriteLock(key).readLock().lock(maxWait()),
                    one.semaphore(key, 2).lock(maxWait()));
            List<List<Long>> told = new ArrayList<>();
            for (RemoteLock h : holders) {
                List<Long> calls = new CopyOnWriteArrayList<>();
                h.onReleaseRequested(l -> calls.add(System.nanoTime()));
                told.add(calls);
            }
            CompletableFuture<RemoteLock> writer = CompletableFuture.supplyAsync(() -> {
                try {
                    return third.readWriteLock(key).writeLock().lock(maxWait());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            if (mode == EtcdLockMode.FAIR) {
                Deadlines.await(
                        () -> other.inspect(key).waiting().orElse(0) == 1, maxWait(), () -> "the writer never queued");
            } else {
                Thread.sleep(300);
            }

            List<LockHolder> asked = other.requestRelease(key);
            assertThat(asked)
                    .extracting(LockHolder::ownerId)
                    .containsExactlyInAnyOrderElementsOf(
                            holders.stream().map(RemoteLock::ownerId).toList());
            assertTrue(
                    Deadlines.within(TestTimeouts.scaled(TOLD_WITHIN), () -> told.stream()
                            .allMatch(c -> c.size() == 1)),
                    "not every holder heard the request: " + told);
            assertTrue(
                    Deadlines.holdsFor(
                            Duration.ofMillis(300), () -> told.stream().allMatch(c -> c.size() == 1)),
                    "a holder heard the request twice: " + told);
            for (RemoteLock h : holders) {
                assertTrue(h.isHeld());
                assertEquals(ReleaseResult.RELEASED, h.release());
            }
            RemoteLock write = writer.get(maxWait().toMillis(), TimeUnit.MILLISECONDS);
            List<Long> writerTold = new CopyOnWriteArrayList<>();
            write.onReleaseRequested(l -> writerTold.add(System.nanoTime()));
            assertTrue(
                    Deadlines.holdsFor(Duration.ofMillis(500), writerTold::isEmpty),
                    "the writer, waiting when the holders were asked, heard it once granted");
            assertEquals(ReleaseResult.RELEASED, write.release());
        }
    }

    /**
     * Fair mode shares etcd's {@code concurrency.Mutex} layout: a request on a key that {@code etcdctl lock} holds
     * names it (its key, as its owner) and leaves it holding, its key's value and lease unchanged; its release then
     * frees the key for distlock.
     */
    @Test
    void requestRelease_etcdctlLockHolder_askedAndStillHolds() throws Exception {
        String key = EtcdTesting.unique("etcdctl");
        String name = PREFIX + "/" + KeyCodec.encode(key);
        try (RemoteLocker asker = locker(EtcdLockMode.FAIR, TTL);
                Etcdctl etcdctl = Etcdctl.start(ETCD, "lock", name)) {
            Deadlines.await(
                    () -> {
                        try {
                            return keysUnder(name + "/").size() == 1;
                        } catch (Exception e) {
                            return false;
                        }
                    },
                    maxWait(),
                    () -> "etcdctl lock did not take the lock: " + etcdctl.output());
            KeyValue before = onlyKey(EtcdLockMode.FAIR, key);
            List<LockHolder> asked = asker.requestRelease(key);
            assertThat(asked).hasSize(1);
            assertEquals(EtcdCalls.text(before.getKey()), asked.get(0).ownerId());
            KeyValue after = onlyKey(EtcdLockMode.FAIR, key);
            assertEquals(before.getValue(), after.getValue(), "etcdctl's key's value");
            assertEquals(before.getLease(), after.getLease(), "etcdctl's key's lease");
            assertTrue(asker.tryLock(key).isEmpty(), "the key was freed by the request");
            etcdctl.close();
            RemoteLock next = asker.lock(key, maxWait());
            assertEquals(ReleaseResult.RELEASED, next.release());
        }
    }

    /** The one etcd key of lock {@code key} (the holder's, no waiter). */
    private KeyValue onlyKey(EtcdLockMode mode, String key) throws Exception {
        List<KeyValue> keys = new ArrayList<>(keysUnder(lockPrefix(mode, key)).values());
        assertThat(keys).as("etcd keys of '%s'", key).hasSize(1);
        return keys.get(0);
    }

    private static long median(List<Long> nanos) {
        List<Long> sorted = nanos.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    private static long max(List<Long> nanos) {
        return nanos.stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    private static String millis(long nanos) {
        return String.format("%.1f", nanos / (double) TimeUnit.MILLISECONDS.toNanos(1));
    }
}
