package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * Multi-key locks (seeds 001 and 003): {@code lockAll} of overlapping key sets from many threads never deadlocks and
 * keeps every key exclusive; a {@code lockAll} that times out leaves nothing held.
 */
public interface MultiKeyContract extends LockerFixture {

    /** Keys the random sets are drawn from. */
    int KEYS = 5;

    /**
     * Threads over several lockers each take random overlapping sets of 2 to 4 keys, given in random order, many
     * times: all finish within the bound (no deadlock), and the history shows no overlap on any key.
     */
    @Test
    default void lockAll_randomOverlappingKeySets_noDeadlock_exclusionPerKey() throws Exception {
        String prefix = TestKeys.unique("multi");
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add(prefix + "-" + k);
        }
        UnguardedAccount[] accounts = new UnguardedAccount[KEYS];
        long[] expected = new long[KEYS];
        for (int k = 0; k < KEYS; k++) {
            accounts[k] = new UnguardedAccount();
        }
        int threads = 6;
        int perThread = acquisitionsPerThread();
        List<List<Integer>> plans = new ArrayList<>();
        for (int i = 0; i < threads * perThread; i++) {
            List<Integer> set = new ArrayList<>(List.of(0, 1, 2, 3, 4));
            Collections.shuffle(set, ThreadLocalRandom.current());
            List<Integer> chosen =
                    set.subList(0, 2 + ThreadLocalRandom.current().nextInt(3));
            plans.add(List.copyOf(chosen));
            chosen.forEach(k -> expected[k]++);
        }
        try (Lockers lockers = Lockers.open(this, 3, leaseTime());
                HistoryRecorder history = HistoryRecorder.inMemory()) {
            Concurrently.run("lockAll", threads, maxWait().multipliedBy(3), i -> {
                RemoteLocker locker = lockers.get(i);
                for (int n = 0; n < perThread; n++) {
                    List<Integer> plan = plans.get(i * perThread + n);
                    List<String> wanted = plan.stream().map(keys::get).toList(); // random order on purpose
                    try (RemoteLockGroup group = locker.lockAll(wanted, maxWait())) {
                        group.locks().forEach(history::acquired);
                        for (int k : plan) {
                            accounts[k].criticalSection(Thread.currentThread().getName());
                        }
                        group.locks().forEach(history::releasing);
                    }
                }
            });
            for (int k = 0; k < KEYS; k++) {
                accounts[k].assertExclusive(expected[k]);
            }
            HistoryChecker.assertConsistent(history.events());
        }
    }

    /**
     * {@code lockAll} whose last key is held elsewhere times out and rolls back: the earlier keys it had taken are
     * free at once for another locker.
     */
    @Test
    default void lockAll_laterKeyTimesOut_rollsBackEarlierKeys() throws Exception {
        String prefix = TestKeys.unique("rollback");
        String a = prefix + "-a";
        String b = prefix + "-b";
        String c = prefix + "-c";
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            try (RemoteLock blocker = lockers.get(0).lock(c, maxWait())) {
                assertThrows(
                        LockTimeoutException.class,
                        () -> lockers.get(1)
                                .lockAll(List.of(c, a, b), TestTimeouts.scaled(Duration.ofMillis(300)))
                                .close(),
                        "lockAll with '" + c + "' held elsewhere");
                for (String earlier : List.of(a, b)) {
                    Optional<RemoteLock> free = lockers.get(2).tryLock(earlier);
                    free.ifPresent(RemoteLock::close);
                    assertTrue(
                            free.isPresent(),
                            "'" + earlier + "' is still held after lockAll timed out on '" + c + "' (no roll-back)");
                }
                assertTrue(blocker.isHeld());
            }
        }
    }
}
