package io.distlock.kit;

import io.distlock.LockException;
import io.distlock.LockKind;
import io.distlock.Lockable;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The randomized run's generator of operations ({@link RandomizedFaultRunContract}), shared by the kit's threads and
 * its worker processes: random {@code lock}, {@code tryLock}, {@code lockAll}, {@code lockAsync} then cancel, hold and
 * release on a few keys, each hold recorded in a history and run through an unguarded account. Where the backend
 * declares them ({@link io.distlock.Capabilities#kinds()}), the read and write sides of the keys' read-write locks and
 * permits of their semaphores (of {@value #PERMITS}) are taken too, the writes run through an account of their own.
 * Every failed call must be a {@link LockException}; anything else ends the run.
 */
final class RandomOperations {

    /** N of the run's semaphores. */
    static final int PERMITS = 2;

    private final List<String> keys;
    private final Duration wait;
    private final HistoryRecorder history;
    private final Map<String, UnguardedAccount> accounts = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    private final AtomicInteger acquired = new AtomicInteger();

    /**
     * @param keys the keys the operations pick from
     * @param wait how long a {@code lock}, {@code lockAll} or {@code lockAsync} waits
     * @param history where holds are recorded
     */
    RandomOperations(List<String> keys, Duration wait, HistoryRecorder history) {
        this.keys = List.copyOf(keys);
        this.wait = wait;
        this.history = history;
    }

    /** The keys of a run: {@code base-0} to {@code base-(count-1)}, the same in every process. */
    static List<String> keys(String base, int count) {
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            keys.add(base + "-" + k);
        }
        return keys;
    }

    /** Locks acquired and used so far. */
    int acquired() {
        return acquired.get();
    }

    /** How many operations ended in each outcome so far. */
    Map<String, Long> outcomes() {
        Map<String, Long> counts = new TreeMap<>();
        outcomes.forEach((outcome, count) -> counts.put(outcome, count.sum()));
        return counts;
    }

    /** Fails if two holders of a key were inside its critical section at once in this process. */
    void assertNoOverlap() {
        for (UnguardedAccount account : accounts.values()) {
            account.assertNoOverlap();
        }
    }

    /**
     * One random operation on a random key through {@code locker}, counted by its outcome; after a failed call, backs
     * off 10 ms (the store is faulted: an application would back off too).
     */
    void runOne(RemoteLocker locker, Random random) throws InterruptedException {
        String outcome = operation(locker, random);
        outcomes.computeIfAbsent(outcome, k -> new LongAdder()).increment();
        if (outcome.endsWith("Exception")) {
            Thread.sleep(10);
        }
    }

    /** One random operation; returns its outcome's name. */
    private String operation(RemoteLocker locker, Random random) throws InterruptedException {
        String key = keys.get(random.nextInt(keys.size()));
        List<LockKind> kinds = locker.capabilities().kinds().stream()
                .filter(k -> k != LockKind.LOCK)
                .toList();
        int op = random.nextInt(10 + kinds.size());
        try {
            if (op >= 10) {
                LockKind kind = kinds.get(op - 10);
                Lockable side =
                        switch (kind) {
                            case READ -> locker.readWriteLock(key).readLock();
                            case WRITE -> locker.readWriteLock(key).writeLock();
                            default -> locker.semaphore(key, PERMITS);
                        };
                String name = kind.label();
                if (random.nextBoolean()) {
                    Optional<RemoteLock> maybe = side.tryLock();
                    if (maybe.isEmpty()) {
                        return name + "-tryLock-busy";
                    }
                    return hold(maybe.get(), random) ? name + "-tryLock" : name + "-tryLock-lostOnArrival";
                }
                return hold(side.lock(wait), random) ? name + "-lock" : name + "-lock-lostOnArrival";
            }
            if (op < 4) {
                return hold(locker.lock(key, wait), random) ? "lock" : "lock-lostOnArrival";
            }
            if (op < 7) {
                Optional<RemoteLock> maybe = locker.tryLock(key);
                if (maybe.isEmpty()) {
                    return "tryLock-busy";
                }
                return hold(maybe.get(), random) ? "tryLock" : "tryLock-lostOnArrival";
            }
            if (op < 8) {
                return lockTwo(locker, random);
            }
            CompletableFuture<RemoteLock> pending = locker.lockAsync(key, wait);
            Thread.sleep(random.nextInt(30));
            if (pending.cancel(true)) {
                return "lockAsync-cancelled";
            }
            try {
                return hold(pending.get(), random) ? "lockAsync" : "lockAsync-lostOnArrival";
            } catch (CancellationException e) {
                return "lockAsync-cancelled";
            } catch (ExecutionException e) {
                if (e.getCause() instanceof LockException failed) {
                    throw failed;
                }
                throw new AssertionError("lockAsync failed with something else than a LockException", e.getCause());
            }
        } catch (LockException e) {
            return e.getClass().getSimpleName();
        }
    }

    private String lockTwo(RemoteLocker locker, Random random) throws InterruptedException {
        List<String> two = new ArrayList<>(keys);
        Collections.shuffle(two, random);
        try (RemoteLockGroup group = locker.lockAll(two.subList(0, 2), wait)) {
            List<RemoteLock> held = new ArrayList<>();
            for (RemoteLock lock : group.locks()) {
                if (recordIfHeld(lock)) {
                    held.add(lock);
                    acquired.incrementAndGet();
                }
            }
            for (RemoteLock lock : held) {
                account(lock).criticalSection(lock.ownerId());
            }
            for (RemoteLock lock : held) {
                if (lock.isHeld()) {
                    history.releasing(lock);
                }
            }
            return held.size() == group.locks().size() ? "lockAll" : "lockAll-lostOnArrival";
        }
    }

    private UnguardedAccount account(RemoteLock lock) {
        return accounts.computeIfAbsent(lock.kind().space() + " " + lock.key(), k -> new UnguardedAccount());
    }

    /**
     * Records {@code lock}'s acquisition if it is still held; false if it was lost between its grant and now. A lease
     * can run out on the way from the grant to the caller (the store faulted, the machine busy): recorded now, that
     * hold would seem granted after holders that came later, with its older fencing token. A lock seen held just
     * before it is recorded is recorded within its hold (short of a pause between the two lines longer than what is
     * left of its validity), so the history keeps the grants' order. A grant left unrecorded is still checked against
     * what the store promised it (its {@code VALID} and {@code FREED} events, see {@link
     * io.distlock.kit.history.HistoryChecker}).
     */
    private boolean recordIfHeld(RemoteLock lock) {
        if (!lock.isHeld()) {
            return false;
        }
        history.acquired(lock, PERMITS);
        lock.onLost(history::lost);
        return true;
    }

    /** Holds {@code lock} for a random while and releases it; false if it was lost before it could be used. */
    private boolean hold(RemoteLock lock, Random random) throws InterruptedException {
        try {
            if (!recordIfHeld(lock)) {
                return false;
            }
            acquired.incrementAndGet();
            if (lock.kind().exclusive()) {
                account(lock).criticalSection(lock.ownerId()); // readers and permit holders share: no account
            }
            Thread.sleep(random.nextInt(20));
            if (lock.isHeld()) {
                history.releasing(lock); // else the hold ends with the loss, recorded by onLost
            }
            return true;
        } finally {
            try {
                lock.release();
            } catch (LockException e) {
                // the store is faulted: the entry ends with its lease
            }
        }
    }
}
