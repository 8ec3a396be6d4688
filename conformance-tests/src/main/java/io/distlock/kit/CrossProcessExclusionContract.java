package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.kit.history.HistoryChecker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Mutual exclusion across processes (seed 000, Theorems 1 and 3): worker JVMs started from the test classpath open the
 * store by the URI of {@link #multiProcessSupport()} and take one key; the kit reads what they report and checks their
 * merged history. {@link MultiProcessContract} adds progress, killed and frozen holders and fencing across processes;
 * this part alone is for a second way into a store whose backend runs the whole kit elsewhere (a secured URI: its
 * workers must open it too, credentials and certificates included). Skipped, with the reason, for a store other
 * processes cannot reach.
 */
public interface CrossProcessExclusionContract extends LockerFixture {

    /** Worker processes of the exclusion and starvation tests. */
    int PROCESSES = 3;

    /** Threads in each worker of the exclusion tests. */
    int THREADS_PER_PROCESS = 2;

    /**
     * Theorem 1 across processes: {@value #PROCESSES} worker JVMs x {@value #THREADS_PER_PROCESS} threads take one key
     * with {@code lock}; inside, each creates an exclusive marker file and runs an unguarded read-modify-write of a
     * shared counter file and seed 000's ATM balance file. No marker collision, no lost update, no overdraft, and the
     * merged history shows no overlap and increasing fencing tokens.
     */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void lock_isExclusive_acrossProcesses_theorem1() throws Exception {
        exclusionAcrossProcesses("lock");
    }

    /** Theorem 3 across processes: the same with {@code tryLock}, retried until each critical section ran. */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void tryLock_isExclusive_acrossProcesses_theorem3() throws Exception {
        exclusionAcrossProcesses("trylock");
    }

    private void exclusionAcrossProcesses(String mode) throws Exception {
        String uri = multiProcessSupport().workerUri().orElseThrow(); // checked by @Requires(Need.OTHER_PROCESSES)
        String key = TestKeys.unique("processes-" + mode);
        int perThread = acquisitionsPerThread();
        Duration startup = Workers.startup();
        try (Workers workers = Workers.create(uri, leaseTime(), maxWait())) {
            for (int p = 0; p < PROCESSES; p++) {
                workers.start(mode, key, THREADS_PER_PROCESS, perThread, 0);
            }
            awaitExits(workers, maxWait().multipliedBy(3).plus(startup));
            List<String> overlaps = new ArrayList<>();
            workers.all().forEach(w -> overlaps.addAll(w.lines("OVERLAP")));
            assertTrue(
                    overlaps.isEmpty(),
                    () -> "two holders were inside the critical section at once across processes (" + overlaps.size()
                            + " times): " + overlaps.subList(0, Math.min(5, overlaps.size())));
            Map<String, Long> totals = workers.awaitDone(startup);
            long expected = (long) PROCESSES * THREADS_PER_PROCESS * perThread;
            assertEquals(expected, totals.get("sections"), "critical sections run");
            assertEquals(expected, readLong(workers.dir().resolve("counter")), "shared counter file (lost updates)");
            assertTrue(totals.get("lowest") >= 0, "the ATM balance went negative: " + totals.get("lowest"));
            assertEquals(
                    UnguardedAccount.START_BALANCE
                            - UnguardedAccount.AMOUNT * totals.get("withdrawals")
                            + UnguardedAccount.AMOUNT * totals.get("deposits"),
                    readLong(workers.dir().resolve("balance")),
                    "ATM balance file after " + totals.get("withdrawals") + " withdrawals and " + totals.get("deposits")
                            + " deposits");
            HistoryChecker.assertConsistent(HistoryChecker.read(workers.dir().resolve("history")));
        }
    }

    /** Waits for every worker to exit, whatever its exit code. */
    private static void awaitExits(Workers workers, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        for (Worker worker : workers.all()) {
            worker.awaitExit(Deadlines.leftUntil(end));
        }
    }

    private static long readLong(Path file) throws IOException {
        return Files.exists(file) ? Long.parseLong(Files.readString(file).trim()) : 0;
    }
}
