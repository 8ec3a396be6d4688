package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockException;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The store-fault matrix: the same faults injected into the store under every backend, through the fixture's {@link
 * StoreFaults}, {@link NodeFaults} and {@link ClientPartition}. Each test records a lock history (grants, releases,
 * losses and every validity the backend reported) and ends with {@link HistoryChecker} over it (no overlapping holds,
 * no validity that outlived the lock, fencing tokens that grow) and a scan of the store that finds nothing left once
 * the leases of dead or cut-off lockers have run out.
 *
 * <p>The holder-side faults ({@code SIGKILL} and {@code SIGSTOP} of a holder, a waiter killed in the queue) are in
 * {@link MultiProcessContract}; a store stopped whole and a lock entry deleted out of band are in {@link
 * StoreFaultContract}.
 */
public interface FaultMatrixContract extends LockerFixture {

    /** Threads (each with a locker of its own) of the contended runs. */
    int FAULT_THREADS = 4;

    /**
     * N of the semaphore of the contended run under node faults: one. A semaphore of more permits over Redlock's
     * masters needs more of them than a lock does (4 of 5 for N = 2: a majority cannot bound N), so it cannot be
     * granted with {@code nodeCount - quorum} of them killed; a permit of one needs what a lock needs everywhere.
     */
    int FAULT_PERMITS = 1;

    /**
     * A minority of the store's nodes ({@code nodeCount - quorum}) killed with {@code SIGKILL} a third of the way
     * through a contended run: every thread still runs all its critical sections (a call that fails while the client
     * moves to another node is retried and counted), no two at once, and the history is consistent. Where the backend
     * declares them ({@link io.distlock.Capabilities#kinds()}), the threads' sections cycle through the kinds on the
     * one key — the lock, the read side, the write side, the permit of a semaphore of {@value #FAULT_PERMITS} — as
     * many sections in all: the lock, the write side and the permit each run an unguarded account, readers share, and
     * the history is checked in each of the key's spaces (no hold beside a lock, a write hold or the permit). Each
     * grant comes within {@link #maxWait()} plus the store's {@link NodeFaults#stallAfterKill()}.
     */
    @Test
    @Requires(Need.NODE_FAULTS)
    default void minorityOfNodesKilled_duringAContendedRun_exclusionHolds_andEveryThreadFinishes() throws Exception {
        NodeFaults nodes = nodeFaults();
        String key = TestKeys.unique("minority-killed");
        int perThread = acquisitionsPerThread();
        int total = FAULT_THREADS * perThread;
        int minority = nodes.nodeCount() - nodes.quorum();
        Duration grantWait = maxWait().plus(nodes.stallAfterKill());
        Map<LockKind, UnguardedAccount> accounts = new EnumMap<>(LockKind.class);
        Map<LockKind, AtomicInteger> sectionsOf = new EnumMap<>(LockKind.class);
        HistoryRecorder history = HistoryRecorder.inMemory();
        AtomicInteger sections = new AtomicInteger();
        AtomicInteger storeErrors = new AtomicInteger();
        AtomicLong longestWait = new AtomicLong();
        CountDownLatch killed = new CountDownLatch(1);
        List<RemoteLocker> lockers = new ArrayList<>();
        try {
            for (int i = 0; i < FAULT_THREADS; i++) {
                lockers.add(recordingLocker(lockerBuilder(), history, leaseTime()));
            }
            List<LockKind> kinds = List.copyOf(lockers.get(0).capabilities().kinds());
            for (LockKind kind : kinds) {
                sectionsOf.put(kind, new AtomicInteger());
                if (kind != LockKind.READ) {
                    accounts.put(kind, new UnguardedAccount()); // readers share; a permit of one excludes
                }
            }
            Thread killer = new Thread(
                    () -> {
                        try {
                            while (sections.get() < total / 3) {
                                Thread.sleep(5);
                            }
                            for (int n = 0; n < minority; n++) {
                                nodes.kill(n);
                            }
                            killed.countDown();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "kit-node-killer");
            killer.setDaemon(true);
            killer.start();
            Concurrently.run("minority-killed", FAULT_THREADS, grantWait.multipliedBy(3), i -> {
                for (int n = 0; n < perThread; n++) {
                    LockKind kind = kinds.get(n % kinds.size()); // the threads start together on each kind
                    long asked = System.nanoTime();
                    RemoteLock lock = lockRetryingStoreErrors(lockers.get(i), kind, key, grantWait, storeErrors);
                    longestWait.accumulateAndGet(System.nanoTime() - asked, Math::max);
                    history.acquired(lock, FAULT_PERMITS);
                    if (kind != LockKind.READ) {
                        accounts.get(kind).criticalSection(lock.ownerId());
                    }
                    history.releasing(lock);
                    sectionsOf.get(kind).incrementAndGet();
                    sections.incrementAndGet();
                    try {
                        lock.release();
                    } catch (LockBackendException e) {
                        storeErrors.incrementAndGet(); // the store frees it at the lease's end
                    }
                }
            });
            killer.join(maxWait().toMillis());
            assertTrue(killed.await(0, TimeUnit.SECONDS), "the run ended before a third of it had passed");
            assertEquals(total, sections.get(), "critical sections run");
            for (Map.Entry<LockKind, UnguardedAccount> account : accounts.entrySet()) {
                account.getValue()
                        .assertExclusive(sectionsOf.get(account.getKey()).get());
            }
            HistoryChecker.assertConsistent(history.events());
            log().info(
                            "{} critical sections ({}) with {} of {} nodes killed a third of the way; {} calls failed"
                                    + " on the store and were retried; the longest wait for a grant took {} ms",
                            total,
                            sectionsOf,
                            minority,
                            nodes.nodeCount(),
                            storeErrors.get(),
                            TimeUnit.NANOSECONDS.toMillis(longestWait.get()));
            Lockers.assertNothingLeft(this, lockers.get(0), leaseTime().plus(expirySlack()), key);
            Lockers.assertOtherSpacesFree(lockers, leaseTime().plus(expirySlack()), kinds, key, FAULT_PERMITS);
        } finally {
            nodes.restoreAll();
            closeAll(lockers);
        }
    }

    /**
     * A majority of the store's nodes killed: {@code tryLock} fails with {@link LockBackendException} and {@code
     * lock(k, wait)} with it or {@link LockTimeoutException}, each by its deadline plus the connect timeout (no hang);
     * a held lock is reported lost ({@code onLost}, {@code isHeld()} false) once its lease or session can no longer be
     * vouched for. After the nodes are back, the old holder's release answers {@link ReleaseResult#ALREADY_LOST} or
     * fails with the store's error, and nothing is half held: both keys are free and the store holds nothing for them
     * once the leases have run out.
     */
    @Test
    @Requires(Need.NODE_FAULTS)
    default void majorityOfNodesKilled_callsFailByTheirDeadline_heldLockIsReportedLost_nothingIsLeftAfterRecovery()
            throws Exception {
        NodeFaults nodes = nodeFaults();
        String held = TestKeys.unique("majority-held");
        String wanted = held.replace("-held", "-wanted");
        Duration connectTimeout = TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT);
        Duration wait = connectTimeout;
        LeaseModel model = Lockers.capabilities(this).leaseModel();
        HistoryRecorder history = HistoryRecorder.inMemory();
        try (RemoteLocker holder =
                        recordingLocker(lockerBuilder().connectTimeout(connectTimeout), history, shortLeaseTime());
                RemoteLocker caller = lockerBuilder()
                        .leaseTime(shortLeaseTime())
                        .connectTimeout(connectTimeout)
                        .build()) {
            RemoteLock lock = holder.lock(held, maxWait());
            history.acquired(lock);
            CountDownLatch lost = new CountDownLatch(1);
            lock.onLost(l -> {
                history.lost(l);
                lost.countDown();
            });
            int majority = nodes.nodeCount() - nodes.quorum() + 1;
            try {
                for (int n = 0; n < majority; n++) {
                    nodes.kill(n);
                }
                Duration bound = wait.plus(connectTimeout).plus(expirySlack());
                String condition = "with " + majority + " of " + nodes.nodeCount() + " nodes killed";
                FailingCalls.assertFailsWithin(
                        "tryLock(" + wanted + ")",
                        condition,
                        bound,
                        () -> caller.tryLock(wanted),
                        LockBackendException.class);
                FailingCalls.assertFailsWithin(
                        "lock(" + wanted + ", " + DurationText.of(wait) + ")",
                        condition,
                        bound,
                        () -> caller.lock(wanted, wait),
                        LockBackendException.class,
                        LockTimeoutException.class);
                Duration lostBound = Lockers.lostWithin(this, model);
                assertTrue(
                        lost.await(lostBound.toNanos(), TimeUnit.NANOSECONDS),
                        "with " + majority + " of " + nodes.nodeCount() + " nodes killed, the holder of '" + held
                                + "' was not told within " + DurationText.of(lostBound)
                                + " that its lock can no longer be vouched"
                                + " for (isHeld=" + lock.isHeld() + ")");
                assertFalse(lock.isHeld(), "isHeld() after onLost");
            } finally {
                nodes.restoreAll();
            }
            ReleaseResult afterRecovery;
            try {
                afterRecovery = lock.release();
            } catch (LockBackendException e) {
                afterRecovery = ReleaseResult.ALREADY_LOST; // the entry ends with its lease
            }
            assertEquals(ReleaseResult.ALREADY_LOST, afterRecovery, "release of the lock lost to the outage");
            HistoryChecker.assertConsistent(history.events());
            Lockers.assertNothingLeft(this, caller, maxWait(), held, wanted);
        }
    }

    /**
     * A holder cut off from the store (its proxies swallow everything) past its lease: another locker gets the key
     * once the lease or session has run out, the cut-off holder reports the loss, and no validity it reported reaches
     * past the next grant — it never believed it held the lock while another owner did. After the partition heals its
     * release answers {@link ReleaseResult#ALREADY_LOST} and leaves the new holder's lock in place. Where the backend
     * declares them ({@link io.distlock.Capabilities#kinds()}), the cut-off holder holds at the same time the read side
     * of the key's read-write lock and the permit of its semaphore of one, through the one partition; the other locker
     * takes the write side and the permit after it, and each is checked alike.
     */
    @Test
    @Requires(Need.CLIENT_PARTITION)
    default void clientPartitionedPastItsLease_reportsTheLoss_andNoOtherHolderOverlapsItsBelief() throws Exception {
        ClientPartition partition =
                storeFaults().flatMap(StoreFaults::clientPartition).orElseThrow();
        String key = TestKeys.unique("partitioned");
        Capabilities capabilities = Lockers.capabilities(this);
        LeaseModel model = capabilities.leaseModel();
        // What the cut-off locker holds: the lock, the read side (the other takes the write side), a permit of one.
        List<LockKind> cutOffKinds = capabilities.kinds().stream()
                .filter(kind -> kind != LockKind.WRITE)
                .toList();
        HistoryRecorder history = HistoryRecorder.inMemory();
        Duration connectTimeout = TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT);
        try (RemoteLocker cutOff = recordingLocker(
                        partition.lockerBuilder().connectTimeout(connectTimeout), history, shortLeaseTime());
                RemoteLocker other = recordingLocker(lockerBuilder(), history, leaseTime())) {
            record CutOff(RemoteLock lock, AtomicInteger lost, AtomicLong lostAt, AtomicLong warnedAt) {}
            boolean warns = Need.AT_RISK_WARNING.missing(this, capabilities).isEmpty();
            List<CutOff> held = new ArrayList<>();
            for (LockKind kind : cutOffKinds) {
                CutOff hold = new CutOff(
                        Lockers.grant(cutOff, kind, key, 1, maxWait()),
                        new AtomicInteger(),
                        new AtomicLong(),
                        new AtomicLong());
                history.acquired(hold.lock(), 1);
                hold.lock().onAtRisk((l, left) -> hold.warnedAt().compareAndSet(0, System.nanoTime()));
                hold.lock().onLost(l -> {
                    hold.lostAt().compareAndSet(0, System.nanoTime());
                    history.lost(l);
                    hold.lost().incrementAndGet();
                });
                held.add(hold);
            }
            RemoteLock[] grants = new RemoteLock[held.size()];
            partition.partition();
            try {
                Duration bound = Lockers.lostWithin(this, model).plus(maxWait());
                // All asked for at once: a grant beside what the cut-off holder still believes it holds shows.
                Concurrently.run(
                        "partitioned-next",
                        held.size(),
                        bound.plus(expirySlack()).plus(maxWait()),
                        i -> {
                            RemoteLock lock = held.get(i).lock();
                            LockKind kind = lock.kind() == LockKind.READ ? LockKind.WRITE : lock.kind();
                            RemoteLock taken = Lockers.lock(
                                    other,
                                    kind,
                                    key,
                                    1,
                                    bound,
                                    () -> "the holder of " + what(lock) + " was cut off from the store, yet the "
                                            + kind.label() + " was not to be had within " + DurationText.of(bound));
                            history.acquired(taken, 1);
                            long grantedAt = System.nanoTime();
                            grants[i] = taken;
                            AtomicInteger lost = held.get(i).lost();
                            assertTrue(
                                    Deadlines.within(expirySlack(), () -> lost.get() > 0 && !lock.isHeld()),
                                    "another owner holds " + what(taken) + " but the cut-off holder of " + what(lock)
                                            + " was not told: isHeld=" + lock.isHeld() + ", onLost fired " + lost.get()
                                            + " times");
                            long lostAt = held.get(i).lostAt().get();
                            long warnedAt = held.get(i).warnedAt().get();
                            if (warns) {
                                assertTrue(
                                        warnedAt != 0 && warnedAt - lostAt <= 0,
                                        "the cut-off holder of " + what(lock) + " was not warned (onAtRisk) before it"
                                                + " was told of the loss: warned "
                                                + (warnedAt == 0
                                                        ? "never"
                                                        : (lostAt - warnedAt) / 1_000_000 + " ms before"));
                            }
                            log().info(
                                            "The cut-off holder of {} was told {} the next grant",
                                            what(lock),
                                            Lockers.toldAgainst(lostAt, grantedAt));
                        });
                HistoryChecker.assertConsistent(history.events());
            } finally {
                partition.heal();
            }
            for (CutOff hold : held) {
                RemoteLock lock = hold.lock();
                ReleaseResult afterHeal;
                try {
                    afterHeal = lock.release();
                } catch (LockBackendException e) {
                    afterHeal = ReleaseResult.ALREADY_LOST; // still reconnecting: nothing of it is in the store
                }
                assertEquals(
                        ReleaseResult.ALREADY_LOST,
                        afterHeal,
                        "release by the healed holder of its lost "
                                + lock.kind().label());
            }
            List<RemoteLock> next = List.of(grants);
            try (RemoteLocker third = openLocker(leaseTime())) {
                for (RemoteLock grant : next) {
                    assertTrue(grant.isHeld(), "the new holder's " + what(grant) + " after the old holder's release");
                    assertFalse(
                            Lockers.isFree(List.of(third), grant.kind().space(), key, 1),
                            what(grant) + " is free while the new holder holds it, after the healed holder's"
                                    + " release");
                }
            }
            for (CutOff hold : held) {
                assertEquals(1, hold.lost().get(), "onLost calls of the cut-off holder of " + what(hold.lock()));
            }
            for (RemoteLock grant : next) {
                history.releasing(grant);
                assertEquals(ReleaseResult.RELEASED, grant.release());
            }
            HistoryChecker.assertConsistent(history.events());
            Lockers.assertNothingLeft(this, other, maxWait(), key);
            Lockers.assertOtherSpacesFree(List.of(other), maxWait(), cutOffKinds, key, 1);
        }
    }

    /**
     * The whole store stopped and started again while waiters wait on a held key: each waiter gets the lock after the
     * recovery or fails with a {@link LockException} by its deadline plus the connect timeout — none hangs and none
     * is granted a lock another holds. The holder's release after the recovery frees the key or reports the loss;
     * nothing is left in the store once the leases have run out.
     */
    @Test
    @Requires(Need.STORE_FAULTS)
    default void storeRestartedWhileWaitersWait_eachGetsTheLockOrAClearExceptionByItsDeadline() throws Exception {
        StoreFaults faults = storeFaults().orElseThrow();
        String key = TestKeys.unique("restart-waiters");
        Duration connectTimeout = TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT);
        Duration wait = maxWait();
        UnguardedAccount account = new UnguardedAccount();
        HistoryRecorder history = HistoryRecorder.inMemory();
        AtomicInteger granted = new AtomicInteger();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<RemoteLocker> lockers = new ArrayList<>();
        try {
            for (int i = 0; i <= FAULT_THREADS; i++) {
                lockers.add(recordingLocker(lockerBuilder().connectTimeout(connectTimeout), history, leaseTime()));
            }
            RemoteLock held = lockers.get(FAULT_THREADS).lock(key, maxWait());
            history.acquired(held);
            CountDownLatch waiting = new CountDownLatch(FAULT_THREADS);
            Thread outage = new Thread(
                    () -> {
                        try {
                            waiting.await();
                            Thread.sleep(
                                    TestTimeouts.scaled(Duration.ofMillis(500)).toMillis());
                            faults.stopStore();
                            Thread.sleep(connectTimeout.toMillis() / 2);
                            faults.startStore();
                            history.releasing(held);
                            try {
                                held.release();
                            } catch (LockBackendException e) {
                                // still reconnecting: the entry ends with its lease
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "kit-store-restart");
            outage.setDaemon(true);
            outage.start();
            Duration bound = wait.plus(connectTimeout).plus(expirySlack());
            Concurrently.run("restart-waiters", FAULT_THREADS, bound.plus(maxWait()), i -> {
                long start = System.nanoTime();
                waiting.countDown();
                try (RemoteLock lock = lockers.get(i).lock(key, wait)) {
                    history.acquired(lock);
                    assertTrue(lock.isHeld(), "a lock granted after the store's restart is not held");
                    account.criticalSection(lock.ownerId());
                    granted.incrementAndGet();
                    history.releasing(lock);
                } catch (LockException e) {
                    failures.add(e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertTrue(
                        took.compareTo(bound) <= 0,
                        "a waiter through the store's restart returned only after " + DurationText.of(took)
                                + ", later than " + DurationText.of(bound));
            });
            outage.join(maxWait().toMillis());
            account.assertExclusive(granted.get());
            HistoryChecker.assertConsistent(history.events());
            log().info(
                            "Through the store's restart {} of {} waiters got '{}', the others failed: {}",
                            granted.get(),
                            FAULT_THREADS,
                            key,
                            failures);
            Lockers.assertNothingLeft(this, lockers.get(0), leaseTime().plus(expirySlack()), key);
        } finally {
            faults.startStore();
            closeAll(lockers);
        }
    }

    /** {@code lock} in messages: {@code 'k'} for the lock, {@code the read lock of 'k'} for the other kinds. */
    private static String what(RemoteLock lock) {
        return lock.kind() == LockKind.LOCK
                ? "'" + lock.key() + "'"
                : "the " + lock.kind().label() + (lock.kind() == LockKind.PERMIT ? "" : " lock") + " of '" + lock.key()
                        + "'";
    }

    private NodeFaults nodeFaults() {
        return storeFaults().flatMap(StoreFaults::nodeFaults).orElseThrow(); // checked by @Requires(NODE_FAULTS)
    }

    /** A locker built from {@code builder} whose grants and renewals report their validity to {@code history}. */
    private RemoteLocker recordingLocker(RemoteLockerBuilder builder, HistoryRecorder history, Duration leaseTime) {
        return builder.leaseTime(leaseTime)
                .provider(new InterceptingProvider(provider(), history))
                .build();
    }

    /**
     * A grant of {@code kind} on {@code key} within {@code wait} of asking (a permit of a semaphore of {@value
     * #FAULT_PERMITS}), retrying a call that failed on the store (a node went away under it) within the same bound.
     */
    private RemoteLock lockRetryingStoreErrors(
            RemoteLocker locker, LockKind kind, String key, Duration wait, AtomicInteger storeErrors)
            throws InterruptedException {
        long end = System.nanoTime() + wait.toNanos();
        while (true) {
            // A retry after a store error waits only for what is left of the grant's bound, not for all of it again.
            Duration left = Deadlines.leftUntil(end);
            try {
                return Lockers.lock(
                        locker,
                        kind,
                        key,
                        FAULT_PERMITS,
                        left,
                        () -> "the " + kind.label() + " of '" + key + "' was not granted within "
                                + DurationText.of(wait)
                                + " of asking (" + storeErrors.get() + " store errors retried in the run so far)"
                                + storeHeld(key));
            } catch (LockBackendException e) {
                storeErrors.incrementAndGet();
                if (System.nanoTime() - end > 0) {
                    throw new AssertionError(
                            "the store kept failing for " + DurationText.of(wait) + " with a minority of nodes killed",
                            e);
                }
                Thread.sleep(20);
            }
        }
    }

    /**
     * For a wait that timed out: what the store holds for {@code key} now ({@link #storeEntries}), so that the failure
     * names what stood in the way (a waiter or a holder ahead, a cell left behind); empty when the fixture cannot list
     * entries. A failing read is named, not thrown: the wait's own failure is the one to report.
     */
    private String storeHeld(String key) {
        try {
            return storeEntries(key)
                    .map(entries -> "; the store holds for the key now: " + entries)
                    .orElse("");
        } catch (RuntimeException e) {
            return "; the store's entries could not be read: " + e;
        }
    }

    private static void closeAll(List<RemoteLocker> lockers) {
        for (RemoteLocker locker : lockers) {
            try {
                locker.close();
            } catch (RuntimeException e) {
                log().warn("Closing a locker after a fault test failed: {}", e.toString());
            }
        }
    }

    private static org.slf4j.Logger log() {
        return org.slf4j.LoggerFactory.getLogger(FaultMatrixContract.class);
    }
}
