package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class MemoryBackendTest {

    @Test
    void waiters_areServedInArrivalOrder() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("memory://fifo")) {
            RemoteLock holder = locker.lock("k", Duration.ofSeconds(1));
            List<Integer> order = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newCachedThreadPool();
            int waiters = 8;
            CountDownLatch done = new CountDownLatch(waiters);
            for (int i = 0; i < waiters; i++) {
                int id = i;
                pool.execute(() -> {
                    try (RemoteLock lock = locker.lock("k", Duration.ofSeconds(30))) {
                        order.add(id);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        done.countDown();
                    }
                });
                // The next waiter starts only once this one is queued, so arrival order is known.
                waitUntilQueued(locker, i + 1);
            }
            holder.close();
            assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(order).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
            pool.shutdownNow();
        }
    }

    /** Deadlines run on the locker's ticker: these tests use the system one, so a wait really ends. */
    @Test
    void timeouts_onTheSystemTicker() throws Exception {
        try (RemoteLocker first = RemoteLockers.open("memory://timeouts");
                RemoteLocker second = RemoteLockers.open("memory://timeouts")) {
            lockTimesOut(first, second);
            lockAllRollsBack(first, second);
        }
    }

    private static void lockTimesOut(RemoteLocker first, RemoteLocker second) throws Exception {
        RemoteLock held = first.lock("k", Duration.ofSeconds(1));
        assertThatThrownBy(() -> second.lock("k", Duration.ofMillis(50)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("'k'")
                .hasMessageContaining("within 50ms");
        held.close();
        assertThat(second.tryLock("k"))
                .as("the timed-out waiter left no queue entry")
                .isPresent();
    }

    private static void lockAllRollsBack(RemoteLocker first, RemoteLocker second) throws Exception {
        RemoteLock blocker = second.lock("c", Duration.ofSeconds(1));
        assertThatThrownBy(() -> first.lockAll(List.of("c", "a", "b"), Duration.ofMillis(100)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("'c'");
        assertThat(second.tryLock("a")).isPresent();
        assertThat(second.tryLock("b")).isPresent();
        blocker.close();
    }

    @Test
    void namedSpaces_areSeparate() {
        try (RemoteLocker a = RemoteLockers.open("memory://space-a");
                RemoteLocker b = RemoteLockers.open("memory://space-b")) {
            assertThat(a.tryLock("k")).isPresent();
            assertThat(b.tryLock("k")).as("another space, another lock").isPresent();
        }
    }

    private static void waitUntilQueued(RemoteLocker locker, int expected) throws InterruptedException {
        // A queued waiter shows up as a thread parked in the space; poll the thread states briefly.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            long parked = Thread.getAllStackTraces().entrySet().stream()
                    .filter(e -> e.getKey().getState() == Thread.State.TIMED_WAITING
                            || e.getKey().getState() == Thread.State.WAITING)
                    .filter(e -> java.util.Arrays.stream(e.getValue())
                            .anyMatch(f -> f.getClassName().endsWith("LockSpace")))
                    .count();
            if (parked >= expected) {
                return;
            }
            Thread.sleep(2);
        }
        throw new AssertionError("waiter " + expected + " never queued");
    }
}
