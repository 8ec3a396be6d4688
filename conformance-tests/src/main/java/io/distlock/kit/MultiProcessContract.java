package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.toolkit.DurationText;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The same promises across processes: worker JVMs started from the test classpath open the store by the URI of
 * {@link #multiProcessSupport()} and run scripted workloads; the kit reads what they report, checks their merged
 * history, and freezes ({@code SIGSTOP}), thaws and kills ({@code SIGKILL}) the one that holds the lock at that
 * moment. Exclusion across processes comes from {@link CrossProcessExclusionContract}; this adds progress (Theorems 2
 * and 4), killed and frozen holders and waiters, and fencing. Skipped, with the reason, for a store other processes
 * cannot reach.
 */
public interface MultiProcessContract extends CrossProcessExclusionContract {

    /** How long a worker JVM may take to start and connect. */
    private static Duration startup() {
        return Workers.startup();
    }

    private String workerUri() {
        return multiProcessSupport().workerUri().orElseThrow(); // checked by @Requires(Need.OTHER_PROCESSES)
    }

    /**
     * Theorem 2 across processes: {@value #PROCESSES} single-threaded worker JVMs keep taking the same key; every
     * process finishes all its acquisitions and none waited longer than {@link #maxWait()} for any of them.
     */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void lock_everyProcessIsServed_acrossProcesses_theorem2() throws Exception {
        String uri = workerUri();
        String key = TestKeys.unique("processes-progress");
        try (Workers workers = Workers.create(uri, leaseTime(), maxWait())) {
            for (int p = 0; p < PROCESSES; p++) {
                workers.start("lock", key, 1, acquisitionsPerThread(), 0);
            }
            workers.awaitDone(maxWait().multipliedBy(3).plus(startup()));
            for (Worker worker : workers.all()) {
                long longest = field(worker.lines("DONE").get(0), "maxWaitNanos");
                assertTrue(
                        longest <= maxWait().toNanos(),
                        worker.name() + " waited " + Duration.ofNanos(longest) + " for one acquisition");
            }
        }
    }

    /**
     * Theorem 4 across processes: {@value #PROCESSES} worker JVMs x {@value #THREADS_PER_PROCESS} threads call {@code
     * tryLock} on a free key at the same instants (round starts on the host's monotonic clock, which all processes
     * share); in every round where several attempts were made, at least one succeeded. The winner holds for half a
     * round, so each round starts free.
     */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void tryLock_simultaneousAcrossProcesses_atLeastOneWinsEveryRound_theorem4() throws Exception {
        String uri = workerUri();
        String key = TestKeys.unique("processes-rounds");
        int rounds = 15;
        Duration period = TestTimeouts.scaled(Duration.ofMillis(300));
        try (Workers workers = Workers.create(uri, leaseTime(), maxWait())) {
            for (int p = 0; p < PROCESSES; p++) {
                workers.start("rounds", key, THREADS_PER_PROCESS, rounds, period.toMillis());
            }
            for (Worker worker : workers.all()) {
                Workers.awaitLine(worker, "OPEN", startup());
            }
            Path go = workers.dir().resolve("go");
            Path ready = workers.dir().resolve("go.tmp");
            long start = System.nanoTime() + period.toNanos();
            Files.writeString(ready, Long.toString(start));
            Files.move(ready, go, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            workers.awaitDone(maxWait().plus(period.multipliedBy(rounds + 1L)).plus(startup()));
            long[] wins = new long[rounds];
            long[] late = new long[rounds];
            boolean[] heldAtStart = new boolean[rounds];
            for (Worker worker : workers.all()) {
                add(wins, worker.lines("ROUNDS").get(0));
                add(late, worker.lines("LATE").get(0));
                for (String freed : worker.lines("FREED")) {
                    String[] f = freed.split(" ");
                    int next = Integer.parseInt(f[1]) + 1;
                    if (next < rounds && Long.parseLong(f[2]) - (start + next * period.toNanos()) > 0) {
                        heldAtStart[next] = true; // a stalled winner freed it late: the lock was not free
                    }
                }
            }
            int contended = 0;
            for (int r = 0; r < rounds; r++) {
                long attempts = (long) PROCESSES * THREADS_PER_PROCESS - late[r];
                if (attempts >= 2 && !heldAtStart[r]) {
                    contended++;
                    int round = r;
                    assertTrue(
                            wins[r] >= 1,
                            () -> "round " + round + " of " + rounds + ": none of " + attempts
                                    + " simultaneous tryLocks" + " across " + PROCESSES
                                    + " processes on the free key succeeded");
                }
            }
            int contendedRounds = contended;
            assertTrue(
                    contendedRounds >= rounds / 2,
                    () -> "only " + contendedRounds + " of " + rounds + " rounds had simultaneous attempts; the workers"
                            + " were too late, or the lock still held, to test anything (raise the timeout factor)");
            HistoryChecker.assertConsistent(HistoryChecker.read(workers.dir().resolve("history")));
        }
    }

    private static void add(long[] sums, String line) {
        String[] f = line.split(" ");
        for (int i = 1; i < f.length; i++) {
            sums[i - 1] += Long.parseLong(f[i]);
        }
    }

    /**
     * A holder killed with {@code SIGKILL} (no release, no clean-up) loses the lock to the store: another locker gets
     * it within the lease time plus slack ({@code RENEWED_TTL}) or the session timeout plus slack ({@code SESSION}).
     */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void killedHolder_lockFreedWithinLeaseTimePlusSlack() throws Exception {
        String uri = workerUri();
        String key = TestKeys.unique("killed");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        try (Workers workers = Workers.create(uri, shortLeaseTime(), maxWait());
                RemoteLocker kit = openLocker(leaseTime())) {
            Worker holder =
                    workers.start("hold", key, 1, 1, Duration.ofMinutes(10).toMillis());
            Workers.awaitLine(holder, "ACQUIRED", startup().plus(maxWait()));
            Optional<RemoteLock> whileAlive = kit.tryLock(key);
            whileAlive.ifPresent(RemoteLock::close);
            assertFalse(whileAlive.isPresent(), "the kit took '" + key + "' while the worker held it");
            holder.kill();
            Duration bound = Lockers.freedWithin(this, model);
            long killed = System.nanoTime();
            try (RemoteLock next = kit.lock(key, bound)) {
                assertTrue(next.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the lock of a killed holder was not freed within " + DurationText.of(bound) + " (" + model
                                + ")",
                        e);
            }
            assertTrue(System.nanoTime() - killed <= bound.toNanos());
        }
    }

    /**
     * A waiter killed with {@code SIGKILL} while it waits in the queue must not hold up those behind it for longer than
     * a dead holder would: once the holder releases, another locker gets the key within the lease time plus slack
     * ({@code RENEWED_TTL}) or the session timeout plus slack ({@code SESSION}), and nothing of the dead waiter is
     * left in the store once its lease has run out.
     */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void killedWaiter_doesNotHoldUpTheQueue_beyondItsLease() throws Exception {
        String key = TestKeys.unique("killed-waiter");
        Capabilities capabilities = Lockers.capabilities(this);
        LeaseModel model = capabilities.leaseModel();
        try (Workers workers = Workers.create(workerUri(), shortLeaseTime(), maxWait());
                Lockers kit = Lockers.open(this, 2, leaseTime())) {
            RemoteLock held = kit.get(0).lock(key, maxWait());
            int entriesHeld = storeEntries(key).map(List::size).orElse(0);
            Worker waiter =
                    workers.start("hold", key, 1, 1, Duration.ofMinutes(10).toMillis());
            Workers.awaitLine(waiter, "TAKING", startup());
            // Give its request the time to reach the store: until its entry shows, where the fixture lists them. A
            // fair backend must queue its waiters in the store; an unfair one's refused attempt may leave nothing.
            Duration oneSecond = TestTimeouts.scaled(Duration.ofSeconds(1));
            if (storeEntries(key).isPresent()) {
                boolean shown = Deadlines.within(
                        capabilities.fair() ? maxWait() : oneSecond,
                        () -> storeEntries(key).orElseThrow().size() > entriesHeld);
                assertTrue(
                        shown || !capabilities.fair(),
                        () -> "the waiter's queue entry for '" + key + "' never showed: " + storeEntries(key));
            } else {
                Thread.sleep(oneSecond.toMillis());
            }
            waiter.kill();
            held.release();
            Duration bound = Lockers.freedWithin(this, model);
            long released = System.nanoTime();
            try (RemoteLock next = kit.get(1).lock(key, bound)) {
                assertTrue(next.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "a waiter killed in the queue held up '" + key + "' for more than " + DurationText.of(bound)
                                + " after its holder released (" + model + ")",
                        e);
            }
            assertTrue(System.nanoTime() - released <= bound.toNanos());
            Lockers.assertNothingLeft(this, kit.get(1), bound, key);
        }
    }

    /**
     * A holder frozen with {@code SIGSTOP} past its lease loses the lock: another process takes it, and when the
     * frozen one is thawed it sees {@code isHeld()} false, {@code onLost} fired exactly once, and its release reports
     * the loss. The merged history (with the frozen hold ended by its loss) stays consistent.
     */
    @Test
    @Requires(Need.OTHER_PROCESSES)
    default void frozenHolder_losesLease_andIsToldWhenThawed() throws Exception {
        try (Workers workers = Workers.create(workerUri(), shortLeaseTime(), maxWait())) {
            Freeze freeze = freezeTheHolder(workers);
            // The history first: a validity that outlived the lock is the root cause of a thawed holder's held=true.
            HistoryChecker.assertConsistent(HistoryChecker.read(workers.dir().resolve("history")));
            List<String> held = freeze.victim().lines("HELD");
            assertEquals(
                    1,
                    held.size(),
                    () -> "the thawed holder did not report; " + freeze.victim().describe());
            assertTrue(
                    held.get(0).endsWith("held=false lost=1"),
                    () -> "after its lease passed to " + freeze.next().name() + ", the thawed holder reported '"
                            + held.get(0) + "' (want held=false lost=1); "
                            + freeze.victim().describe());
            assertEquals(1, freeze.victim().lines("LOST").size(), "onLost calls in the thawed holder");
            assertTrue(
                    freeze.victim().lines("RELEASED").get(0).endsWith("ALREADY_LOST"),
                    () -> "release of the lost lock: " + freeze.victim().lines("RELEASED"));
        }
    }

    /**
     * For backends that declare fencing: a fenced resource (it accepts a write only with a token at least the last
     * one it accepted) shared by the processes accepts none of a frozen holder's writes once the next holder has
     * written. The frozen holder always tries one more write after it is thawed.
     */
    @Test
    @Requires({Need.FENCING, Need.OTHER_PROCESSES})
    default void fencedResource_rejectsFrozenHoldersWrites_afterNextHolderWrote() throws Exception {
        try (Workers workers = Workers.create(workerUri(), shortLeaseTime(), maxWait())) {
            Freeze freeze = freezeTheHolder(workers);
            List<FencedResource.Write> writes = new FencedResource(workers.dir()).writes();
            int firstOfNext = -1;
            for (int i = 0; i < writes.size(); i++) {
                if (writes.get(i).holder().equals(freeze.nextOwner())
                        && writes.get(i).accepted()) {
                    firstOfNext = i;
                    break;
                }
            }
            int from = firstOfNext;
            assertTrue(
                    from >= 0,
                    () -> "the fenced resource accepted no write of the next holder " + freeze.nextOwner()
                            + " (its token below the frozen holder's?); writes received: " + writes);
            List<FencedResource.Write> late = writes.subList(from, writes.size()).stream()
                    .filter(w -> w.holder().equals(freeze.victimOwner()))
                    .toList();
            assertFalse(
                    late.isEmpty(),
                    () -> "the thawed holder sent no write after the next holder's; writes received: " + writes);
            List<FencedResource.Write> stale =
                    late.stream().filter(FencedResource.Write::accepted).toList();
            assertTrue(
                    stale.isEmpty(),
                    () -> "the fenced resource accepted " + stale.size() + " write(s) of the frozen holder after the"
                            + " next holder wrote: " + stale + "; writes received: " + writes);
        }
    }

    /**
     * Two workers each hold the key once; the kit freezes whichever reports the lock first, waits until the other
     * takes it and writes, thaws the frozen one, and waits for both to finish.
     */
    private Freeze freezeTheHolder(Workers workers) throws Exception {
        String key = TestKeys.unique("frozen");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        long holdMillis = shortLeaseTime().toMillis();
        Worker a = workers.start("hold", key, 1, 1, holdMillis);
        Worker b = workers.start("hold", key, 1, 1, holdMillis);
        Duration firstGrant = startup().plus(maxWait());
        long end = System.nanoTime() + firstGrant.toNanos();
        Optional<Worker> holder = Optional.empty();
        while (holder.isEmpty()) {
            holder = List.of(a, b).stream()
                    .filter(w -> !w.lines("ACQUIRED").isEmpty())
                    .findFirst();
            if (holder.isEmpty()) {
                assertTrue(
                        System.nanoTime() < end,
                        () -> "no worker acquired within " + DurationText.of(firstGrant) + "; " + a.describe() + "; "
                                + b.describe());
                Thread.sleep(1);
            }
        }
        Worker victim = holder.get();
        victim.freeze(); // the holder at this moment: its hold lasts a lease time, the kit reacts in milliseconds
        Worker next = victim == a ? b : a;
        String victimOwner = victim.lines("ACQUIRED").get(0).split(" ")[1];
        String nextOwner;
        try {
            Duration bound = Lockers.freedWithin(this, model).plus(startup());
            String acquired = Workers.awaitLine(next, "ACQUIRED", bound);
            nextOwner = acquired.split(" ")[1];
            if (Lockers.capabilities(this).fencing()) {
                Workers.awaitLine(next, "WRITE " + nextOwner, bound);
            }
        } finally {
            victim.thaw();
        }
        Duration finish = maxWait().plus(startup());
        assertEquals(0, victim.awaitExit(finish), victim::describe);
        assertEquals(0, next.awaitExit(finish), next::describe);
        return new Freeze(victim, victimOwner, next, nextOwner);
    }

    private static long field(String line, String name) {
        for (String part : line.split(" ")) {
            if (part.startsWith(name + "=")) {
                return Long.parseLong(part.substring(name.length() + 1));
            }
        }
        throw new IllegalArgumentException("no " + name + " in '" + line + "'");
    }
}
