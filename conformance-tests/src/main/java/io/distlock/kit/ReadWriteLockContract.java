package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.Lockable;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteReadWriteLock;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Read-write locks ({@link RemoteLocker#readWriteLock}), for backends that declare them: a write hold overlaps no
 * other hold, read or write, in the recorded history; readers really share; a writer waiting behind a stream of readers
 * is served, and one that gave up holds no reader back; and release, loss, fencing and a refused upgrade as for locks.
 */
public interface ReadWriteLockContract extends LockerFixture {

    /**
     * Writers exclude everyone: threads over {@value MutualExclusionContract#LOCKERS} lockers take one key's read and
     * write sides at random (one write in four); the writers run the unguarded account, the readers stay a moment,
     * and the recorded history shows no hold beside a write hold.
     */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void readWrite_writeHoldOverlapsNoOtherHold_manyThreads() throws Exception {
        String key = TestKeys.unique("rw-exclusive");
        UnguardedAccount account = new UnguardedAccount();
        AtomicInteger writes = new AtomicInteger();
        int threads = MutualExclusionContract.LOCKERS * MutualExclusionContract.THREADS_PER_LOCKER;
        try (Lockers lockers = Lockers.open(this, MutualExclusionContract.LOCKERS, leaseTime());
                HistoryRecorder history = HistoryRecorder.inMemory()) {
            Concurrently.run("read-write", threads, maxWait().multipliedBy(3), i -> {
                RemoteReadWriteLock rw = lockers.get(i).readWriteLock(key);
                for (int n = 0; n < acquisitionsPerThread(); n++) {
                    boolean write = (n + i) % 4 == 0;
                    try (RemoteLock lock = (write ? rw.writeLock() : rw.readLock()).lock(maxWait())) {
                        history.acquired(lock);
                        if (write) {
                            account.criticalSection(lock.ownerId());
                            writes.incrementAndGet();
                        } else {
                            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                        }
                        history.releasing(lock);
                    }
                }
            });
            account.assertExclusive(writes.get());
            HistoryChecker.assertConsistent(history.events());
        }
    }

    /**
     * Readers really share: {@value #READERS} readers, each through its own locker, take the read side and keep it
     * until all of them hold it at once (at most a few seconds). A backend that grants readers one at a time (correct, but no read-write lock)
     * fails here.
     */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void readLock_isShared_severalReadersHoldAtOnce() throws Exception {
        String key = TestKeys.unique("rw-shared");
        CountDownLatch allIn = new CountDownLatch(READERS);
        AtomicInteger most = new AtomicInteger();
        AtomicInteger holding = new AtomicInteger();
        Duration together = TestTimeouts.scaled(Duration.ofSeconds(5));
        try (Lockers lockers = Lockers.open(this, READERS, leaseTime())) {
            Concurrently.run("readers", READERS, maxWait().multipliedBy(3), i -> {
                try (RemoteLock read = lockers.get(i)
                        .readWriteLock(key)
                        .readLock()
                        .lock(maxWait().multipliedBy(2))) {
                    assertEquals(LockKind.READ, read.kind(), "the kind of a read grant");
                    most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                    allIn.countDown();
                    allIn.await(together.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                    holding.decrementAndGet();
                }
            });
        }
        assertEquals(
                READERS,
                most.get(),
                "readers of '" + key + "' held the read side at once at most " + most.get() + " of " + READERS
                        + " (waited " + DurationText.of(together) + " for all): the backend serializes readers");
    }

    /** Readers in {@link #readLock_isShared_severalReadersHoldAtOnce}. */
    int READERS = 3;

    /**
     * While readers hold, a writer is refused ({@code tryLock}, a short {@code lock}), and while a writer holds, readers
     * and other writers are; released, each side can be taken again.
     */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void writeLock_whileReadersHold_isRefused_andReadersWhileAWriterHolds() throws Exception {
        String key = TestKeys.unique("rw-refused");
        Duration shortWait = TestTimeouts.scaled(Duration.ofMillis(300));
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteReadWriteLock mine = lockers.get(0).readWriteLock(key);
            RemoteReadWriteLock theirs = lockers.get(1).readWriteLock(key);
            RemoteLock read = mine.readLock().lock(maxWait());
            try {
                Optional<RemoteLock> write = theirs.writeLock().tryLock();
                write.ifPresent(RemoteLock::close);
                assertFalse(write.isPresent(), "a writer's tryLock beside a reader of '" + key + "'");
                assertThrows(
                        LockTimeoutException.class,
                        () -> theirs.writeLock().lock(shortWait).close(),
                        "a writer's short lock beside a reader of '" + key + "'");
            } finally {
                read.close();
            }
            RemoteLock write = theirs.writeLock().lock(maxWait());
            try {
                assertEquals(LockKind.WRITE, write.kind(), "the kind of a write grant");
                Optional<RemoteLock> reader = mine.readLock().tryLock();
                reader.ifPresent(RemoteLock::close);
                assertFalse(reader.isPresent(), "a reader's tryLock beside the writer of '" + key + "'");
                Optional<RemoteLock> writer = mine.writeLock().tryLock();
                writer.ifPresent(RemoteLock::close);
                assertFalse(writer.isPresent(), "a second writer's tryLock beside the writer of '" + key + "'");
                assertTrue(
                        Lockers.isFree(lockers.get(0), key),
                        "the lock on '" + key + "' is another thing than its read-write lock");
            } finally {
                write.close();
            }
            Optional<RemoteLock> again = mine.readLock().tryLock();
            again.ifPresent(RemoteLock::close);
            assertTrue(again.isPresent(), "the read side of '" + key + "' after the writer released");
        }
    }

    /**
     * No writer starvation, on every backend: {@value #STREAMS} reader threads keep the read side held without a gap,
     * each taking its next read lock ({@code tryLock}, through its other locker) before it releases the one it holds;
     * a writer that asks meanwhile is served within {@link #maxWait()}. A backend must refuse those next read locks
     * once the writer waits (the readers then wait behind it): a fair one by its queue, another by marking the lock
     * while a writer waits. A backend that lets later readers overtake a waiting writer starves it.
     */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void writeLock_behindAStreamOfReaders_isServed() throws Exception {
        String key = TestKeys.unique("rw-starve");
        Duration hold = TestTimeouts.scaled(Duration.ofMillis(30));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger holding = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (Lockers lockers = Lockers.open(this, 2 * STREAMS + 1, leaseTime())) {
            Thread[] readers = new Thread[STREAMS];
            for (int i = 0; i < STREAMS; i++) {
                int index = i;
                readers[i] = new Thread(
                        () -> {
                            try {
                                int side = 0;
                                RemoteLock current = lockers.get(2 * index)
                                        .readWriteLock(key)
                                        .readLock()
                                        .lock(maxWait().multipliedBy(2));
                                holding.incrementAndGet();
                                while (!stop.get()) {
                                    Thread.sleep(hold.toMillis());
                                    side = 1 - side;
                                    RemoteReadWriteLock other =
                                            lockers.get(2 * index + side).readWriteLock(key);
                                    Optional<RemoteLock> next = other.readLock().tryLock();
                                    current.release();
                                    current = next.isPresent()
                                            ? next.get()
                                            : other.readLock().lock(maxWait().multipliedBy(2));
                                }
                                current.release();
                            } catch (Throwable e) {
                                failure.compareAndSet(null, e);
                            }
                        },
                        "kit-reader-" + i);
                readers[i].setDaemon(true);
                readers[i].start();
            }
            try {
                assertTrue(
                        Deadlines.within(maxWait(), () -> holding.get() >= STREAMS),
                        "the readers of '" + key + "' never held; failure: " + failure.get());
                RemoteReadWriteLock writer = lockers.get(2 * STREAMS).readWriteLock(key);
                long asked = System.nanoTime();
                try (RemoteLock write = writer.writeLock().lock(maxWait())) {
                    assertTrue(write.isHeld());
                } catch (LockTimeoutException e) {
                    throw new AssertionError(
                            "writer starvation: a writer of '" + key + "' behind a stream of readers was not served"
                                    + " within " + maxWait(),
                            e);
                }
                assertTrue(System.nanoTime() - asked <= maxWait().toNanos());
            } finally {
                stop.set(true);
                for (Thread reader : readers) {
                    reader.join(maxWait().multipliedBy(3).toMillis());
                }
            }
            assertEquals(null, failure.get(), "a reader failed");
        }
    }

    /**
     * A writer that gives up waiting holds no reader back: while a reader holds, a writer waits a moment in vain
     * ({@link LockTimeoutException}); the moment its wait has ended, another reader's {@code tryLock} is granted. A
     * backend that holds readers back behind a waiting writer (its queue entry, its mark) must withdraw that when the
     * writer gives up, before the call returns, not when the writer's lease or the mark's time runs out.
     */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void writeLock_thatGaveUpWaiting_holdsNoReaderBack() throws Exception {
        String key = TestKeys.unique("rw-gave-up");
        try (Lockers lockers = Lockers.open(this, 3, leaseTime());
                RemoteLock read = lockers.get(0).readWriteLock(key).readLock().lock(maxWait())) {
            Lockable writer = lockers.get(1).readWriteLock(key).writeLock();
            assertThrows(LockTimeoutException.class, () -> writer.lock(GIVE_UP_AFTER), "the writer beside a reader");
            Optional<RemoteLock> next =
                    lockers.get(2).readWriteLock(key).readLock().tryLock();
            next.ifPresent(RemoteLock::close);
            assertTrue(
                    next.isPresent(),
                    "a reader's tryLock of '" + key + "' right after a waiting writer gave up was refused: the writer"
                            + " still holds readers back");
            assertTrue(read.isHeld());
        }
    }

    /** How long the writer of {@link #writeLock_thatGaveUpWaiting_holdsNoReaderBack} waits in vain. */
    Duration GIVE_UP_AFTER = Duration.ofMillis(300);

    /** Reader threads in {@link #writeLock_behindAStreamOfReaders_isServed}. */
    int STREAMS = 2;

    /** A read lock released twice: {@link ReleaseResult#RELEASED}, then {@link ReleaseResult#ALREADY_RELEASED}. */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void readLock_releasedTwice_isAlreadyReleased_andFreesTheKey() throws Exception {
        String key = TestKeys.unique("rw-release");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock read = lockers.get(0).readWriteLock(key).readLock().lock(maxWait());
            assertTrue(read.isHeld());
            assertEquals(ReleaseResult.RELEASED, read.release(), "first release of a read lock");
            assertFalse(read.isHeld(), "isHeld() after release");
            assertEquals(ReleaseResult.ALREADY_RELEASED, read.release(), "second release of a read lock");
            read.close();
            Optional<RemoteLock> write =
                    lockers.get(1).readWriteLock(key).writeLock().tryLock();
            write.ifPresent(RemoteLock::close);
            assertTrue(write.isPresent(), "the write side of '" + key + "' after its only reader released");
        }
    }

    /**
     * No upgrade in place: a thread holding the read side asks its locker for the write side and is refused at once
     * with {@link IllegalStateException} (lock, timed lock, tryLock), and its read lock is still held.
     */
    @Test
    @Requires(Need.READ_WRITE_LOCKS)
    default void writeLock_whileTheSameThreadHoldsTheReadSide_isRefused_notUpgraded() throws Exception {
        String key = TestKeys.unique("rw-upgrade");
        Duration quick = TestTimeouts.scaled(Duration.ofSeconds(2));
        try (RemoteLocker locker = openLocker(leaseTime())) {
            RemoteReadWriteLock rw = locker.readWriteLock(key);
            try (RemoteLock read = rw.readLock().lock(maxWait())) {
                long start = System.nanoTime();
                assertThrows(IllegalStateException.class, () -> rw.writeLock().lock(maxWait()), "upgrade by lock");
                assertThrows(IllegalStateException.class, () -> rw.writeLock().tryLock(), "upgrade by tryLock");
                assertThrows(IllegalStateException.class, () -> rw.writeLock().lock(), "upgrade by lock()");
                assertTrue(
                        System.nanoTime() - start < quick.toNanos(),
                        "a refused upgrade must fail at once, took " + Duration.ofNanos(System.nanoTime() - start));
                assertTrue(read.isHeld(), "the read lock after the refused upgrade");
            }
            Optional<RemoteLock> write = rw.writeLock().tryLock();
            write.ifPresent(RemoteLock::close);
            assertTrue(write.isPresent(), "the write side once the read side is released");
        }
    }

    /**
     * Fencing for read-write locks: every grant carries a token, and tokens grow strictly from grant to grant on one
     * key as the sides alternate through several lockers.
     */
    @Test
    @Requires({Need.READ_WRITE_LOCKS, Need.FENCING})
    default void readWrite_fencingTokens_increaseStrictly() throws Exception {
        String key = TestKeys.unique("rw-fencing");
        try (Lockers lockers = Lockers.open(this, 3, leaseTime())) {
            long previous = Long.MIN_VALUE;
            for (int n = 0; n < 12; n++) {
                RemoteReadWriteLock rw = lockers.get(n).readWriteLock(key);
                try (RemoteLock lock = (n % 3 == 0 ? rw.writeLock() : rw.readLock()).lock(maxWait())) {
                    OptionalLong token = lock.fencingToken();
                    assertTrue(token.isPresent(), "the " + lock.kind().label() + " grant " + n + " has no token");
                    long before = previous;
                    assertTrue(
                            token.getAsLong() > before,
                            "the " + lock.kind().label() + " grant " + n + " got token " + token.getAsLong() + " after "
                                    + before);
                    previous = token.getAsLong();
                }
            }
        }
    }

    /**
     * A reader whose renewals fail (its store unreachable, or its process gone) loses its share when the lease runs
     * out: a waiting writer gets the write side within the lease time plus {@link #expirySlack()}, the reader is told
     * ({@code isHeld()} false, {@code onLost} once) and its release reports the loss.
     */
    @Test
    @Requires({Need.READ_WRITE_LOCKS, Need.RENEWED_TTL_LEASES})
    default void readLock_whoseRenewalsFail_isLost_andAWriterGetsIn() throws Exception {
        String key = TestKeys.unique("rw-lost");
        Duration ttl = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker readerLocker =
                        lockerBuilder().leaseTime(ttl).provider(intercepting).build();
                RemoteLocker writerLocker = openLocker(leaseTime())) {
            RemoteLock read = readerLocker.readWriteLock(key).readLock().lock(maxWait());
            AtomicInteger lost = new AtomicInteger();
            read.onLost(l -> lost.incrementAndGet());
            intercepting.failRenewals();
            Duration bound = ttl.plus(expirySlack());
            try (RemoteLock write = writerLocker.readWriteLock(key).writeLock().lock(bound)) {
                assertTrue(write.isHeld());
                assertTrue(
                        Deadlines.within(expirySlack(), () -> lost.get() > 0 && !read.isHeld()),
                        "a writer holds '" + key + "' but the reader that stopped renewing was not told: isHeld="
                                + read.isHeld() + ", onLost fired " + lost.get() + " times");
                assertEquals(ReleaseResult.ALREADY_LOST, read.release(), "release of the lost read lock");
                assertTrue(write.isHeld(), "the writer's lock after the lost reader's release");
                assertEquals(1, lost.get(), "onLost calls");
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the reader stopped renewing, yet no writer got '" + key + "' within " + bound, e);
            }
        }
    }

    /**
     * A reader that dies while holding (its locker goes silent: no renewal, no release reaches the store) frees its
     * share with its lease: a writer gets in within the lease time plus {@link #expirySlack()}.
     */
    @Test
    @Requires({Need.READ_WRITE_LOCKS, Need.RENEWED_TTL_LEASES})
    default void readLock_ofAReaderThatDies_isFreedWithItsLease_andAWriterGetsIn() throws Exception {
        String key = TestKeys.unique("rw-dies");
        Duration ttl = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker readerLocker =
                        lockerBuilder().leaseTime(ttl).provider(intercepting).build();
                RemoteLocker writerLocker = openLocker(leaseTime())) {
            readerLocker.readWriteLock(key).readLock().lock(maxWait());
            intercepting.goSilent();
            Duration bound = ttl.plus(expirySlack());
            try (RemoteLock write = writerLocker.readWriteLock(key).writeLock().lock(bound)) {
                assertTrue(write.isHeld());
            } catch (LockTimeoutException e) {
                throw new AssertionError(
                        "the share of a reader that died was not freed: no writer got '" + key + "' within " + bound,
                        e);
            }
        }
    }
}
