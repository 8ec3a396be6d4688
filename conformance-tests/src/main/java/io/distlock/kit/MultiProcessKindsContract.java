package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LeaseModel;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryEvent;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Read-write locks and semaphores across processes, for backends that declare them and whose store other processes
 * reach: worker JVMs ({@link WorkerMain}) take the sides and the permits and record their holds, the kit checks the
 * merged history, and kills ({@code SIGKILL}) a reader and a permit holder while they hold.
 */
public interface MultiProcessKindsContract extends LockerFixture {

    /** Worker processes of the contended tests. */
    int KIND_PROCESSES = 3;

    /** N of the semaphore shared by the processes. */
    int SHARED_PERMITS = 2;

    private String workerUri() {
        return multiProcessSupport().workerUri().orElseThrow(); // checked by @Requires(Need.OTHER_PROCESSES)
    }

    /**
     * Read-write exclusion across processes: {@value #KIND_PROCESSES} workers of two threads each take one key's
     * sides (a write in four) and hold each a moment; in the merged history no hold overlaps a write hold.
     */
    @Test
    @Requires({Need.READ_WRITE_LOCKS, Need.OTHER_PROCESSES})
    default void readWrite_writeHoldOverlapsNoOtherHold_acrossProcesses() throws Exception {
        String key = TestKeys.unique("rw-processes");
        int holds = Math.max(4, acquisitionsPerThread() / 2);
        try (Workers workers = Workers.create(workerUri(), leaseTime(), maxWait())) {
            for (int p = 0; p < KIND_PROCESSES; p++) {
                workers.start("kinds", key, 2, holds, 5, Map.of("kind", "readwrite"));
            }
            workers.awaitDone(maxWait().multipliedBy(3).plus(Workers.startup()));
            List<HistoryEvent> events = HistoryChecker.read(workers.dir().resolve("history"));
            HistoryChecker.assertConsistent(events);
            long writes = events.stream()
                    .filter(e -> e.type() == HistoryEvent.Type.ACQUIRED && e.exclusive())
                    .count();
            assertTrue(writes > 0, "the workers recorded no write hold of '" + key + "': " + events.size() + " events");
        }
    }

    /**
     * The semaphore's bound across processes: {@value #KIND_PROCESSES} workers of two threads each take permits of a
     * semaphore of {@value #SHARED_PERMITS} and hold each a while; in the merged history never more than {@value
     * #SHARED_PERMITS} are held at once, and {@value #SHARED_PERMITS} are.
     */
    @Test
    @Requires({Need.SEMAPHORES, Need.OTHER_PROCESSES})
    default void semaphore_neverMoreThanNHolders_andNReached_acrossThreeProcesses() throws Exception {
        String key = TestKeys.unique("sem-processes");
        long holdMillis = TestTimeouts.scaled(Duration.ofMillis(100)).toMillis();
        try (Workers workers = Workers.create(workerUri(), leaseTime(), maxWait())) {
            for (int p = 0; p < KIND_PROCESSES; p++) {
                workers.start(
                        "kinds",
                        key,
                        2,
                        4,
                        holdMillis,
                        Map.of("kind", "permit", "permits", Integer.toString(SHARED_PERMITS)));
            }
            workers.awaitDone(maxWait().multipliedBy(3).plus(Workers.startup()));
            List<HistoryEvent> events = HistoryChecker.read(workers.dir().resolve("history"));
            HistoryChecker.assertConsistent(events);
            assertEquals(
                    SHARED_PERMITS,
                    HistoryChecker.mostHeldAtOnce(events),
                    "the most permits of '" + key + "' held at once across " + KIND_PROCESSES + " processes");
        }
    }

    /**
     * A permit holder killed with {@code SIGKILL} while it holds the only permit frees it when its lease (or session)
     * ends: a waiter gets it within the lease time plus slack ({@code RENEWED_TTL}) or the session timeout plus slack
     * ({@code SESSION}).
     */
    @Test
    @Requires({Need.SEMAPHORES, Need.OTHER_PROCESSES})
    default void killedPermitHolder_freesItsPermit_andAWaiterGetsIt() throws Exception {
        String key = TestKeys.unique("sem-killed");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        try (Workers workers = Workers.create(workerUri(), shortLeaseTime(), maxWait());
                RemoteLocker kit = openLocker(leaseTime())) {
            Worker holder = workers.start(
                    "hold", key, 1, 1, Duration.ofMinutes(10).toMillis(), Map.of("kind", "permit", "permits", "1"));
            Workers.awaitLine(holder, "ACQUIRED", Workers.startup().plus(maxWait()));
            Optional<RemoteLock> whileAlive = kit.semaphore(key, 1).tryLock();
            whileAlive.ifPresent(RemoteLock::close);
            assertFalse(whileAlive.isPresent(), "the kit took the only permit of '" + key + "' while a worker held it");
            holder.kill();
            Duration bound = Lockers.freedWithin(this, model);
            try (RemoteLock next = kit.semaphore(key, 1).lock(bound)) {
                assertTrue(next.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the permit of a killed holder of '" + key + "' was not freed within " + DurationText.of(bound)
                                + " (" + model + ")",
                        e);
            }
        }
    }

    /**
     * A reader killed with {@code SIGKILL} while it holds frees its share when its lease (or session) ends: a writer
     * gets the write side within the lease time plus slack ({@code RENEWED_TTL}) or the session timeout plus slack
     * ({@code SESSION}).
     */
    @Test
    @Requires({Need.READ_WRITE_LOCKS, Need.OTHER_PROCESSES})
    default void killedReader_freesItsShare_andAWriterGetsIn() throws Exception {
        String key = TestKeys.unique("rw-killed");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        try (Workers workers = Workers.create(workerUri(), shortLeaseTime(), maxWait());
                RemoteLocker kit = openLocker(leaseTime())) {
            Worker reader =
                    workers.start("hold", key, 1, 1, Duration.ofMinutes(10).toMillis(), Map.of("kind", "read"));
            Workers.awaitLine(reader, "ACQUIRED", Workers.startup().plus(maxWait()));
            Optional<RemoteLock> whileAlive = kit.readWriteLock(key).writeLock().tryLock();
            whileAlive.ifPresent(RemoteLock::close);
            assertFalse(whileAlive.isPresent(), "the kit took the write side of '" + key + "' beside a worker's read");
            reader.kill();
            Duration bound = Lockers.freedWithin(this, model);
            try (RemoteLock write = kit.readWriteLock(key).writeLock().lock(bound)) {
                assertTrue(write.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the share of a killed reader of '" + key + "' was not freed within " + DurationText.of(bound)
                                + " (" + model + "): no writer got in",
                        e);
            }
        }
    }

    /**
     * A writer killed with {@code SIGKILL} while it waits behind a reader holds later readers back no longer than its
     * lease (or session): the kit holds the read side, a worker's writer queues or marks the lock behind it (the kit's
     * second reader is then refused: it would overtake the writer), the worker is killed, and the second reader gets
     * the read side within the lease time plus slack ({@code RENEWED_TTL}) or the session timeout plus slack ({@code
     * SESSION}), beside the first.
     */
    @Test
    @Requires({Need.READ_WRITE_LOCKS, Need.OTHER_PROCESSES})
    default void killedWaitingWriter_holdsReadersBackNoLongerThanItsLease() throws Exception {
        String key = TestKeys.unique("rw-killed-waiter");
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        try (Workers workers = Workers.create(workerUri(), shortLeaseTime(), maxWait());
                RemoteLocker kit = openLocker(leaseTime());
                RemoteLocker other = openLocker(leaseTime());
                RemoteLock first = kit.readWriteLock(key).readLock().lock(maxWait())) {
            Worker writer =
                    workers.start("hold", key, 1, 1, Duration.ofMinutes(10).toMillis(), Map.of("kind", "write"));
            Workers.awaitLine(writer, "TAKING", Workers.startup().plus(maxWait()));
            assertTrue(
                    Deadlines.within(maxWait(), () -> {
                        Optional<RemoteLock> overtaking =
                                other.readWriteLock(key).readLock().tryLock();
                        overtaking.ifPresent(RemoteLock::close);
                        return overtaking.isEmpty();
                    }),
                    "a reader of '" + key + "' overtook a writer waiting in another process for " + maxWait());
            writer.kill();
            Duration bound = Lockers.freedWithin(this, model);
            try (RemoteLock second = other.readWriteLock(key).readLock().lock(bound)) {
                assertTrue(second.isHeld() && first.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "a writer of '" + key + "' killed while it waited still held readers back after "
                                + DurationText.of(bound) + " (" + model + ")",
                        e);
            }
        }
    }
}
