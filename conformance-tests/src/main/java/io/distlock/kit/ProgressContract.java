package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Theorems 2 and 4 of seed 000: every waiter is eventually served (and, on a backend that declares {@code fair}, in
 * arrival order), and among simultaneous {@code tryLock}s on a free lock at least one succeeds.
 */
public interface ProgressContract extends LockerFixture {

    /** Waiters of the arrival-order test. */
    int FIFO_WAITERS = 6;

    /** How many later arrivals may overtake a waiter on a fair backend. */
    int FIFO_SLACK = 1;

    /** Threads of the simultaneous-tryLock test. */
    int TRYLOCK_THREADS = 6;

    /** Rounds of the simultaneous-tryLock test. */
    int TRYLOCK_ROUNDS = 30;

    /**
     * Theorem 2: threads that keep taking the same key, releasing it and asking again, are each served every time
     * within {@link #maxWait()}: nobody is starved by the others.
     */
    @Test
    default void lock_everyWaiterAcquiresWithinBound_theorem2() throws Exception {
        String key = TestKeys.unique("starvation");
        int perThread = acquisitionsPerThread();
        int threads = 6;
        AtomicLong longestWaitNanos = new AtomicLong();
        AtomicInteger served = new AtomicInteger();
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            Concurrently.run("starvation", threads, maxWait().multipliedBy(3), i -> {
                RemoteLocker locker = lockers.get(i);
                for (int n = 0; n < perThread; n++) {
                    long asked = System.nanoTime();
                    // lock(key, maxWait) throws LockTimeoutException for a starved waiter, failing the test
                    try (RemoteLock lock = locker.lock(key, maxWait())) {
                        longestWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
                        served.incrementAndGet();
                        Thread.sleep(1); // hold it a moment so that the others queue up
                    }
                }
            });
        }
        assertEquals(threads * perThread, served.get(), "acquisitions served");
        assertTrue(
                longestWaitNanos.get() <= maxWait().toNanos(),
                "longest wait " + Duration.ofNanos(longestWaitNanos.get()) + " exceeds " + maxWait());
    }

    /**
     * Theorem 2 for backends that declare {@code fair}: waiters that arrive one after another while the key is held
     * are served in arrival order; none is overtaken by more than {@value #FIFO_SLACK} later arrival(s).
     */
    @Test
    @Requires(Need.FAIRNESS)
    default void lock_servesWaitersInArrivalOrder_fairBackends_theorem2() throws Exception {
        String key = TestKeys.unique("fifo");
        Duration arrivalGap = TestTimeouts.scaled(Duration.ofMillis(150));
        List<Integer> served = Collections.synchronizedList(new ArrayList<>());
        try (Lockers lockers = Lockers.open(this, FIFO_WAITERS + 1, leaseTime())) {
            RemoteLock holder = lockers.get(FIFO_WAITERS).lock(key, maxWait());
            List<Thread> waiters = new ArrayList<>();
            List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
            try {
                for (int i = 0; i < FIFO_WAITERS; i++) {
                    int arrival = i;
                    java.util.concurrent.CountDownLatch asking = new java.util.concurrent.CountDownLatch(1);
                    Thread waiter = new Thread(
                            () -> {
                                asking.countDown();
                                try (RemoteLock lock = lockers.get(arrival).lock(key, maxWait())) {
                                    served.add(arrival);
                                } catch (Throwable e) {
                                    failures.add(e);
                                }
                            },
                            "kit-fifo-waiter-" + i);
                    waiter.setDaemon(true);
                    waiter.start();
                    waiters.add(waiter);
                    // Arrival i is the moment waiter i calls lock: wait until it is about to, then give the call time
                    // to reach the store before the next waiter arrives.
                    assertTrue(asking.await(maxWait().toMillis(), TimeUnit.MILLISECONDS), "waiter " + i + " started");
                    Thread.sleep(arrivalGap.toMillis());
                }
            } finally {
                holder.close();
            }
            for (Thread waiter : waiters) {
                TimeUnit.MILLISECONDS.timedJoin(waiter, maxWait().toMillis());
            }
            assertTrue(failures.isEmpty(), () -> "waiters failed: " + failures);
        }
        assertEquals(FIFO_WAITERS, served.size(), () -> "waiters served: " + served);
        for (int position = 0; position < served.size(); position++) {
            int arrival = served.get(position);
            long overtakenBy = served.subList(0, position).stream()
                    .filter(earlier -> earlier > arrival)
                    .count();
            assertTrue(
                    overtakenBy <= FIFO_SLACK,
                    "waiter " + arrival + " was overtaken by " + overtakenBy + " later arrivals; served order " + served
                            + " (arrival order 0.." + (FIFO_WAITERS - 1) + ")");
        }
    }

    /**
     * Theorem 4: in every one of {@value #TRYLOCK_ROUNDS} rounds, {@value #TRYLOCK_THREADS} threads over several
     * lockers call {@code tryLock} on a free key at the same moment: at least one succeeds (and, Theorem 3, at most
     * one). The winner releases before the next round.
     */
    @Test
    default void tryLock_simultaneousOnFreeLock_atLeastOneWins_theorem4() throws Exception {
        String key = TestKeys.unique("trylock-progress");
        CyclicBarrier go = new CyclicBarrier(TRYLOCK_THREADS);
        CyclicBarrier attempted = new CyclicBarrier(TRYLOCK_THREADS);
        CyclicBarrier released = new CyclicBarrier(TRYLOCK_THREADS);
        AtomicInteger[] winners = new AtomicInteger[TRYLOCK_ROUNDS];
        for (int r = 0; r < TRYLOCK_ROUNDS; r++) {
            winners[r] = new AtomicInteger();
        }
        long barrierWait = maxWait().toMillis();
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            Concurrently.run("simultaneous-trylock", TRYLOCK_THREADS, maxWait().multipliedBy(3), i -> {
                RemoteLocker locker = lockers.get(i);
                for (int round = 0; round < TRYLOCK_ROUNDS; round++) {
                    go.await(barrierWait, TimeUnit.MILLISECONDS);
                    Optional<RemoteLock> won = locker.tryLock(key);
                    if (won.isPresent()) { // the winner keeps it until everyone has attempted
                        winners[round].incrementAndGet();
                    }
                    attempted.await(barrierWait, TimeUnit.MILLISECONDS);
                    won.ifPresent(RemoteLock::close);
                    released.await(barrierWait, TimeUnit.MILLISECONDS);
                }
            });
        }
        for (int round = 0; round < TRYLOCK_ROUNDS; round++) {
            int won = winners[round].get();
            assertTrue(
                    won >= 1,
                    "round " + round + " of " + TRYLOCK_ROUNDS + ": none of " + TRYLOCK_THREADS
                            + " simultaneous tryLocks on the free key succeeded");
            assertTrue(won <= 1, "round " + round + ": " + won + " simultaneous tryLocks succeeded at once");
        }
    }
}
