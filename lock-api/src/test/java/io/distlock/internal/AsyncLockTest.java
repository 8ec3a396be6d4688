package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The asynchronous path on the real in-memory store, which implements it natively (a waiter is not a thread). */
class AsyncLockTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static String uri(TestInfo test) {
        return "memory://async-" + test.getTestMethod().orElseThrow().getName();
    }

    @Test
    void lockAsync_tenThousandPendingOnOneKey_useBoundedThreads_andAreServedInCallOrder(TestInfo test)
            throws Exception {
        int calls = 10_000;
        try (RemoteLocker locker = RemoteLockers.open(uri(test));
                RemoteLocker holderSide = RemoteLockers.open(uri(test))) {
            RemoteLock holder = holderSide.lock("k", WAIT);
            int threadsBefore = Thread.activeCount();
            ConcurrentLinkedQueue<Integer> served = new ConcurrentLinkedQueue<>();
            List<CompletableFuture<Void>> done = new ArrayList<>(calls);
            for (int i = 0; i < calls; i++) {
                int call = i;
                done.add(locker.lockAsync("k", Duration.ofMinutes(5)).thenAccept(lock -> {
                    served.add(call);
                    lock.release();
                }));
            }
            int threadsWhilePending = Thread.activeCount();

            holder.release();
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
                    .get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS);

            assertThat(threadsWhilePending - threadsBefore)
                    .as("threads started for %d pending lockAsync calls", calls)
                    .isLessThan(16);
            List<Integer> order = new ArrayList<>(served);
            for (int i = 0; i < calls; i++) {
                if (order.get(i) != i) {
                    throw new AssertionError("call " + order.get(i) + " was served " + i + "th; out of call order");
                }
            }
        }
    }

    @Test
    void lockAsync_cancelled_leavesTheQueue(TestInfo test) throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(uri(test));
                RemoteLocker holderSide = RemoteLockers.open(uri(test))) {
            RemoteLock holder = holderSide.lock("k", WAIT);
            CompletableFuture<RemoteLock> waiting = locker.lockAsync("k", Duration.ofHours(1));
            assertThat(waiting.cancel(true)).isTrue();
            holder.release();
            assertThat(holderSide.tryLock("k"))
                    .as("the cancelled waiter is no longer first in line")
                    .isPresent();
        }
    }

    @Test
    void lockAsync_twiceOnOneKeyFromOneThread_bothQueue_notReentrancyChecked(TestInfo test) throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(uri(test))) {
            RemoteLock first =
                    locker.lockAsync("k", WAIT).get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS);
            CompletableFuture<RemoteLock> second = locker.lockAsync("k", WAIT);
            assertThat(second).isNotDone();
            first.release();
            RemoteLock next = second.get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS);
            assertThat(next.isHeld()).isTrue();
            next.release();
        }
    }

    /**
     * A grant that the backend completes on a task of the executor the locker gave it (here the SPI's default: the
     * blocking acquire on a worker) is adopted on that thread: the caller's continuation runs where the grant came,
     * without a hand-off to another worker.
     */
    @Test
    void lockAsync_grantCompletedByTheBackendsTask_isAdoptedOnThatThread(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        try (RemoteLocker locker = hooked(test, hooked);
                RemoteLocker holderSide = RemoteLockers.open(uri(test))) {
            RemoteLock holder = holderSide.lock("k", WAIT);
            CompletableFuture<Thread> adoptedOn = locker.lockAsync("k", WAIT).thenApply(lock -> {
                lock.release();
                return Thread.currentThread();
            });
            Waits.until("the backend's blocking acquire", WAIT, () -> hooked.acquiring != null);
            holder.release();

            assertThat(adoptedOn.get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS))
                    .as("the thread the grant was adopted on")
                    .isSameAs(hooked.acquiring);
        }
    }

    /**
     * The adoption on a backend's task is taken once per task: a release in the caller's continuation that completes
     * the next waiter's future on the same thread (the memory backend grants on the releasing thread) has that grant
     * adopted on another worker, so a chain of hand-overs does not grow one thread's stack.
     */
    @Test
    void lockAsync_adoptedOnABackendsTask_releaseInTheContinuation_handsTheNextGrantToAnotherWorker(TestInfo test)
            throws Exception {
        int chained = 200;
        HookedProvider hooked = new HookedProvider();
        try (RemoteLocker locker = hooked(test, hooked);
                RemoteLocker holderSide = RemoteLockers.open(uri(test))) {
            RemoteLock holder = holderSide.lock("k", WAIT);
            ConcurrentLinkedQueue<Integer> depths = new ConcurrentLinkedQueue<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            // the first waiter through the blocking acquire on a worker (a backend's task), queued first
            done.add(locker.lockAsync("k", WAIT).thenAccept(lock -> {
                depths.add(Thread.currentThread().getStackTrace().length);
                lock.release();
            }));
            Waits.until("the backend's blocking acquire", WAIT, () -> hooked.acquiring != null);
            hooked.nativeAsync = true; // the others granted by the release before them, on the releasing thread
            for (int i = 0; i < chained; i++) {
                done.add(locker.lockAsync("k", WAIT).thenAccept(lock -> {
                    depths.add(Thread.currentThread().getStackTrace().length);
                    lock.release();
                }));
            }
            holder.release();
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
                    .get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS);

            int shallowest = depths.stream().mapToInt(Integer::intValue).min().orElseThrow();
            int deepest = depths.stream().mapToInt(Integer::intValue).max().orElseThrow();
            assertThat(deepest - shallowest)
                    .as("frames between the shallowest and the deepest of %d chained grants", chained + 1)
                    .isLessThan(100);
        }
    }

    private static RemoteLocker hooked(TestInfo test, HookedProvider provider) {
        return RemoteLockers.builder().uri(uri(test)).provider(provider).build();
    }
}
