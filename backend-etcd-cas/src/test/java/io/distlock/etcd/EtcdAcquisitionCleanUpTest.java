package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.EtcdCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What an acquisition that ends without the lock leaves in etcd: nothing, whether it failed, timed out, was
 * interrupted or cancelled, or its put landed late; and a waiter parks no thread.
 */
class EtcdAcquisitionCleanUpTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
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
                                && !c.startsWith(EtcdAcquisitionCleanUpTest.class.getName())))
                .map(e -> e.getKey().getName())
                .collect(Collectors.toList());
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
}
