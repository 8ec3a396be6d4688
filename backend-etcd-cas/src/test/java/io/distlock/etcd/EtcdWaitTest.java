package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.EtcdCluster;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A waiter parked on a watch: woken by a deletion that falls between its read and its watch, and failed with a
 * {@code LockBackendException}, not a timeout, when etcd stops answering.
 */
class EtcdWaitTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
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

    /** With more than one key ahead, the deletion of the one it watches (a waiter that gave up) does not grant it. */
    @Test
    void fairWaiter_whosePredecessorGivesUpWhileTheFirstHolds_keepsWaiting() throws Exception {
        String key = EtcdTesting.unique("middle");
        Duration ttl = Duration.ofSeconds(60);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (LockBackend holder = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl);
                LockBackend middle = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl);
                LockBackend last = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            Lease held = holder.acquire(request(key, ttl), Deadline.after(maxWait(), Ticker.system()))
                    .orElseThrow();
            Future<Boolean> givesUp = pool.submit(
                    () -> middle.acquire(request(key, ttl), Deadline.after(Duration.ofSeconds(2), Ticker.system()))
                            .isPresent());
            Thread.sleep(500); // the middle waiter queued
            Future<Lease> waiting =
                    pool.submit(() -> last.acquire(request(key, ttl), Deadline.after(maxWait(), Ticker.system()))
                            .orElseThrow());
            assertFalse(givesUp.get(maxWait().toMillis(), TimeUnit.MILLISECONDS), "the middle waiter timed out");
            Thread.sleep(500);
            assertFalse(waiting.isDone(), "the last waiter still waits: the first key is still held");
            assertTrue(holder.release(held));
            assertTrue(last.release(waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS)));
        } finally {
            pool.shutdownNow();
        }
    }
}
