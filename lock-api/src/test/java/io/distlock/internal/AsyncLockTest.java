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
}
