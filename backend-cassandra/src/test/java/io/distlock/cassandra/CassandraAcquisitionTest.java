package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A wait of either algorithm on one node: a refused, timed-out or interrupted one leaves nothing in the tables; waiters
 * hold no thread while they wait, are served in turn, and a cancelled one stops; a release wakes one local waiter.
 */
class CassandraAcquisitionTest extends OneNodeFixture {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CassandraAcquisitionTest.class);

    @Test
    void failedAndFinishedAttempts_leaveNothingInTheTables() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key(algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease);
                    CassandraLockBackend b = open("algorithm=" + algorithm, lease)) {
                Lease held = a.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(cellsOf(key)).isNotEmpty();

                // A refused tryLock.
                assertThat(b.tryAcquire(request(key, lease))).isEmpty();
                // A wait that times out.
                assertThat(b.acquire(request(key, lease), Deadline.after(Duration.ofMillis(700), Ticker.system())))
                        .isEmpty();
                // A wait that is interrupted.
                AtomicReference<Throwable> outcome = new AtomicReference<>();
                CountDownLatch started = new CountDownLatch(1);
                Thread waiter = new Thread(() -> {
                    started.countDown();
                    try {
                        b.acquire(request(key, lease), Deadline.unbounded(Ticker.system()));
                    } catch (Throwable e) {
                        outcome.set(e);
                    }
                });
                long requestsBefore = b.storeRequests().orElseThrow();
                waiter.start();
                started.await();
                Deadlines.await(
                        () -> b.storeRequests().orElseThrow() >= requestsBefore + 3,
                        Duration.ofSeconds(10),
                        () -> "the waiter sent nothing");
                waiter.interrupt();
                waiter.join(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis());
                assertThat(outcome.get()).isInstanceOf(InterruptedException.class);

                // Only the holder's cells are left.
                List<String> cells = cellsOf(key);
                assertThat(cells).allMatch(c -> c.contains(held.ownerId()), "only the holder's cells: " + cells);
                assertThat(a.release(held)).isTrue();
                assertThat(cellsOf(key)).isEmpty();
                assertThat(a.release(held)).isFalse();
            }
        }
    }

    /**
     * Listing 4 without a thread: waiters of the legacy algorithm on a held key hold no thread of the blocking executor
     * and park none inside the backend between their TryLocks; a cancelled one stops trying; once the holder releases,
     * each of the others gets the lock in turn, and nothing is left in the tables.
     */
    @Test
    void legacyAcquireAsync_waitersParkNoThread_cancelledOneStops_othersServed() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("legacy-async");
        int waiters = 6;
        java.util.concurrent.ThreadPoolExecutor executor =
                (java.util.concurrent.ThreadPoolExecutor) java.util.concurrent.Executors.newCachedThreadPool();
        try (CassandraLockBackend backend = open("algorithm=legacy", lease)) {
            Lease held = backend.tryAcquire(request(key, lease)).orElseThrow();
            long requestsBefore = backend.calls().requests();
            List<CompletableFuture<Optional<Lease>>> pending = new ArrayList<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            AtomicInteger served = new AtomicInteger();
            for (int i = 0; i < waiters; i++) {
                CompletableFuture<Optional<Lease>> waiting = backend.acquireAsync(
                        request(key, lease), Deadline.after(Duration.ofMinutes(2), Ticker.system()), executor);
                pending.add(waiting);
                done.add(waiting.thenAccept(granted -> {
                    served.incrementAndGet();
                    backend.release(granted.orElseThrow());
                }));
            }
            // Every waiter has tried at least twice (one main-row read each): they are between TryLocks now and then.
            Deadlines.await(
                    () -> backend.calls().requests() - requestsBefore >= 2L * waiters,
                    Duration.ofSeconds(20),
                    () -> "the waiters did not try: " + (backend.calls().requests() - requestsBefore) + " requests");
            assertThat(executor.getLargestPoolSize())
                    .as("threads of the blocking executor used while waiting")
                    .isZero();
            assertThat(threadsParkedInTheBackend())
                    .as("threads inside the backend while %d legacy acquireAsync calls wait", waiters)
                    .isEmpty();

            assertThat(pending.get(waiters - 1).cancel(false)).isTrue();
            assertThat(backend.release(held)).isTrue();
            CompletableFuture.allOf(done.subList(0, waiters - 1).toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(served.get()).isEqualTo(waiters - 1);
            assertThat(cellsOf(key)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }

    private static final int PARKED_SNAPSHOTS = 5;

    private static final long PARKED_SNAPSHOT_MILLIS = 50;

    /**
     * The names of the threads parked in the backend: not running, with a frame of the backend on their stack, in each of
     * {@value #PARKED_SNAPSHOTS} snapshots {@value #PARKED_SNAPSHOT_MILLIS} ms apart. One snapshot also catches a thread
     * passing through (the poll thread, caught once at load 11 while it started an attempt, for a moment not running); a
     * thread that waits for an answer is in every one.
     */
    private static List<String> threadsParkedInTheBackend() throws InterruptedException {
        List<String> parked = threadsInTheBackendNow();
        for (int i = 1; i < PARKED_SNAPSHOTS && !parked.isEmpty(); i++) {
            Thread.sleep(PARKED_SNAPSHOT_MILLIS);
            parked = new ArrayList<>(parked);
            parked.retainAll(threadsInTheBackendNow());
        }
        return parked;
    }

    private static List<String> threadsInTheBackendNow() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getState() != Thread.State.RUNNABLE)
                .filter(e -> java.util.Arrays.stream(e.getValue())
                        .map(StackTraceElement::getClassName)
                        .anyMatch(c -> c.startsWith("io.distlock.cassandra.")
                                && !c.startsWith(CassandraAcquisitionTest.class.getName())
                                && !c.startsWith(OneNodeFixture.class.getName())))
                .map(e -> e.getKey().getName())
                .toList();
    }

    /**
     * The native asynchronous wait: 40 waiters of one key hold no thread (none of the blocking executor, none parked in
     * the backend), are served in call order once the holder releases, and a cancelled one leaves the queue.
     */
    @Test
    void acquireAsync_manyWaiters_parkNoThread_areServedInCallOrder_andCancelledOneLeavesTheQueue() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("async");
        int waiters = 40;
        java.util.concurrent.ThreadPoolExecutor executor =
                (java.util.concurrent.ThreadPoolExecutor) java.util.concurrent.Executors.newCachedThreadPool();
        try (CassandraLockBackend backend = open("", lease)) {
            Lease held = backend.tryAcquire(request(key, lease)).orElseThrow();
            List<Integer> served = java.util.Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<Optional<Lease>>> pending = new ArrayList<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                int call = i;
                CompletableFuture<Optional<Lease>> waiting = backend.acquireAsync(
                        request(key, lease), Deadline.after(Duration.ofMinutes(2), Ticker.system()), executor);
                pending.add(waiting);
                done.add(waiting.thenAccept(granted -> {
                    served.add(call);
                    backend.release(granted.orElseThrow());
                }));
            }
            Deadlines.await(
                    () -> queueCells(key) == waiters + 1,
                    Duration.ofSeconds(20),
                    () -> "the waiters did not queue: " + queueCells(key));
            assertThat(executor.getLargestPoolSize())
                    .as("threads of the blocking executor used while waiting")
                    .isZero();
            // This includes the locker's GlobalTime updater thread: its ticks wait for no answer either.
            assertThat(threadsParkedInTheBackend())
                    .as("threads inside the backend while %d acquireAsync calls wait", waiters)
                    .isEmpty();

            assertThat(pending.get(waiters - 1).cancel(false)).isTrue();
            Deadlines.await(
                    () -> queueCells(key) == waiters,
                    Duration.ofSeconds(20),
                    () -> "the cancelled waiter's cell is still queued: " + queueCells(key));

            assertThat(backend.release(held)).isTrue();
            CompletableFuture.allOf(done.subList(0, waiters - 1).toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            List<Integer> inCallOrder = new ArrayList<>();
            for (int i = 0; i < waiters - 1; i++) {
                inCallOrder.add(i);
            }
            assertThat(served).containsExactlyElementsOf(inCallOrder);
            assertThat(cellsOf(key)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * Sixteen waiters of one key in one locker, each releasing as soon as it is granted. A release
     * wakes the next in line only: the others keep their poll timers (slow here, {@code pollMin=200ms}), so each
     * hand-off costs the release and one claim, not a poll of every waiter still queued.
     */
    @Test
    void release_wakesOneLocalWaiter_requestsPerAcquisitionStayBounded() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        int waiters = 16;
        String key = key("herd");
        java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newFixedThreadPool(4);
        try (CassandraLockBackend backend = open("pollMin=200ms&pollMax=1s", lease)) {
            Lease first = backend.tryAcquire(request(key, lease)).orElseThrow();
            Deadline deadline = Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(60)), Ticker.system());
            List<CompletableFuture<Boolean>> served = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                served.add(backend.acquireAsync(request(key, lease), deadline, executor)
                        .thenApplyAsync(l -> backend.release(l.orElseThrow()), executor));
            }
            Deadlines.await(
                    () -> cellsOf(key).stream()
                                    .filter(c -> c.startsWith(CassandraStatements.QUEUE_TABLE))
                                    .count()
                            == waiters + 1,
                    Duration.ofSeconds(30),
                    () -> "the waiters did not all queue: " + cellsOf(key));
            Thread.sleep(300); // every waiter's first poll answered (they poll every 200 ms at most)
            long before = backend.storeRequests().orElseThrow();
            assertThat(backend.release(first)).isTrue();
            CompletableFuture.allOf(served.toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            double perAcquisition = (backend.storeRequests().orElseThrow() - before) / (double) waiters;
            // A hand-off: release 3 (check, owner delete, queue delete) + the next waiter's poll and claim 4; some
            // timer polls and GlobalTime ticks on top. A wake-up of every waiter adds one poll per waiter still queued.
            LOG.info("{} waiters of one key in one locker: {} store requests per acquisition", waiters, perAcquisition);
            assertThat(perAcquisition).as("store requests per acquisition").isLessThan(11.0);
            assertThat(served).allMatch(f -> f.join());
            assertThat(cellsOf(key)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }
}
