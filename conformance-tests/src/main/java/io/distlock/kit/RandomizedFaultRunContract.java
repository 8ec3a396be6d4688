package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long randomized run, after Jepsen's shape: a generator of operations, a nemesis of faults and a checker over the
 * whole history. {@value #LOCKERS} lockers x {@value #THREADS_PER_LOCKER} threads run random {@code lock}, {@code
 * tryLock}, {@code lockAll}, {@code lockAsync} then cancel, hold and release operations on {@value #KEYS} keys until
 * the budget of acquisitions is spent (and at least one fault was injected and undone), while a nemesis thread injects
 * random faults from those the fixture offers (the whole store stopped and started, a minority of nodes killed or
 * paused, the proxied locker cut off) and undoes each after a random while. Every failed call must be a {@link LockException}; the merged history must show no
 * overlap, no validity that outlived its lock and growing fencing tokens; nothing may be left once leases run out.
 *
 * <p>The budget is {@value #BUDGET_PROPERTY} (default {@value #DEFAULT_BUDGET} acquisitions, a bounded run for CI);
 * {@code -D}{@value #BUDGET_PROPERTY}{@code =100000} makes it the long run. The seed of the random choices is logged
 * and can be fixed with {@value #SEED_PROPERTY}.
 */
public interface RandomizedFaultRunContract extends LockerFixture {

    /** The system property with the run's budget of acquisitions. */
    String BUDGET_PROPERTY = "distlock.kit.randomized.acquisitions";

    /** The system property that fixes the seed of the run's random choices. */
    String SEED_PROPERTY = "distlock.kit.randomized.seed";

    /** The budget of a run in CI. */
    int DEFAULT_BUDGET = 150;

    /** Lockers of the run; with a client partition, the last reaches the store through the proxies. */
    int LOCKERS = 3;

    /** Threads per locker. */
    int THREADS_PER_LOCKER = 2;

    /** Keys the operations pick from. */
    int KEYS = 3;

    /** The randomized run; see the type's documentation. */
    @Test
    @Tag("randomized")
    @Requires(Need.STORE_FAULTS)
    default void randomizedOperations_underRandomStoreFaults_keepTheHistoryConsistent() throws Exception {
        int budget = Integer.getInteger(BUDGET_PROPERTY, DEFAULT_BUDGET);
        long seed = Long.getLong(SEED_PROPERTY, System.nanoTime());
        Logger log = LoggerFactory.getLogger(RandomizedFaultRunContract.class);
        log.info(
                "Randomized run: {} acquisitions, seed {} (-D{}={} repeats its choices)",
                budget,
                seed,
                SEED_PROPERTY,
                seed);
        StoreFaults faults = storeFaults().orElseThrow();
        Optional<NodeFaults> nodes = faults.nodeFaults().filter(n -> n.nodeCount() > n.quorum());
        Optional<ClientPartition> partition = faults.clientPartition();
        String base = TestKeys.unique("randomized");
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add(base + "-" + k);
        }
        Duration connectTimeout = TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT);
        Duration wait = TestTimeouts.scaled(Duration.ofSeconds(3));
        HistoryRecorder history = HistoryRecorder.inMemory();
        Map<String, UnguardedAccount> accounts = new ConcurrentHashMap<>();
        Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
        Map<String, LongAdder> injected = new ConcurrentHashMap<>();
        AtomicInteger acquired = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        List<RemoteLocker> lockers = new ArrayList<>();
        Random seeds = new Random(seed);
        try {
            for (int i = 0; i < LOCKERS; i++) {
                boolean proxied = partition.isPresent() && i == LOCKERS - 1;
                lockers.add((proxied ? partition.get().lockerBuilder() : lockerBuilder())
                        .connectTimeout(connectTimeout)
                        .leaseTime(shortLeaseTime())
                        .provider(new InterceptingProvider(provider(), history))
                        .build());
            }
            Random nemesisRandom = new Random(seeds.nextLong());
            Thread nemesis = new Thread(
                    () -> {
                        try {
                            while (!done.get()) {
                                Thread.sleep(200 + nemesisRandom.nextInt(1500));
                                if (done.get()) {
                                    break;
                                }
                                String kind = injectOne(faults, nodes, partition, nemesisRandom, done);
                                injected.computeIfAbsent(kind, k -> new LongAdder())
                                        .increment();
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "kit-nemesis");
            nemesis.setDaemon(true);
            long[] threadSeeds = new long[LOCKERS * THREADS_PER_LOCKER];
            for (int t = 0; t < threadSeeds.length; t++) {
                threadSeeds[t] = seeds.nextLong();
            }
            nemesis.start();
            Duration runLimit = maxWait().multipliedBy(Math.max(3, budget / 50));
            try {
                Concurrently.run("randomized", threadSeeds.length, runLimit, t -> {
                    Random random = new Random(threadSeeds[t]);
                    RemoteLocker locker = lockers.get(t % LOCKERS);
                    // Until the budget is spent and a first fault was undone: a fast store spends a small budget
                    // before the nemesis has injected anything.
                    while (acquired.get() < budget || injected.isEmpty()) {
                        String op = randomOperation(locker, keys, wait, random, history, accounts, acquired);
                        outcomes.computeIfAbsent(op, k -> new LongAdder()).increment();
                        if (op.endsWith("Exception")) {
                            Thread.sleep(10); // the store is faulted: an application would back off too
                        }
                    }
                });
            } finally {
                done.set(true);
                nemesis.join(maxWait().toMillis());
                nemesis.interrupt();
                faults.startStore();
                nodes.ifPresent(NodeFaults::restoreAll);
                partition.ifPresent(ClientPartition::heal);
            }
            List<String> violations = HistoryChecker.violations(history.events());
            log.info(
                    "Randomized run: {} acquisitions, outcomes {}, faults injected {}, violations {}",
                    acquired.get(),
                    new TreeMap<>(outcomes),
                    new TreeMap<>(injected),
                    violations.size());
            HistoryChecker.assertConsistent(history.events());
            assertTrue(!injected.isEmpty(), "the run ended before the nemesis injected a single fault");
            for (UnguardedAccount account : accounts.values()) {
                account.assertNoOverlap();
            }
            Lockers.assertNothingLeft(
                    this,
                    lockers.get(0),
                    shortLeaseTime().plus(expirySlack()).plus(maxWait()),
                    keys.toArray(String[]::new));
        } finally {
            for (RemoteLocker locker : lockers) {
                try {
                    locker.close();
                } catch (RuntimeException e) {
                    log.warn("Closing a locker after the randomized run failed: {}", e.toString());
                }
            }
        }
    }

    /**
     * One random fault, held for a random while and undone; returns its kind. Partitions and node faults only where
     * the fixture offers them; the whole store is stopped less often, since nothing can be granted meanwhile.
     */
    private static String injectOne(
            StoreFaults faults,
            Optional<NodeFaults> nodes,
            Optional<ClientPartition> partition,
            Random random,
            AtomicBoolean done)
            throws InterruptedException {
        List<String> kinds = new ArrayList<>(List.of("store-restart"));
        nodes.ifPresent(n -> kinds.addAll(List.of("node-kill", "node-kill")));
        nodes.filter(NodeFaults::canPause).ifPresent(n -> kinds.addAll(List.of("node-pause", "node-pause")));
        partition.ifPresent(p -> kinds.addAll(List.of("partition", "partition")));
        String kind = kinds.get(random.nextInt(kinds.size()));
        long held = TestTimeouts.scaled(Duration.ofMillis(200 + random.nextInt(2500)))
                .toMillis();
        switch (kind) {
            case "store-restart" -> {
                faults.stopStore();
                sleepUnlessDone(held / 2, done);
                faults.startStore();
            }
            case "node-kill" -> {
                NodeFaults n = nodes.orElseThrow();
                n.kill(random.nextInt(n.nodeCount()));
                sleepUnlessDone(held, done);
                n.restoreAll();
            }
            case "node-pause" -> {
                NodeFaults n = nodes.orElseThrow();
                int node = random.nextInt(n.nodeCount());
                n.pause(node);
                sleepUnlessDone(held, done);
                n.resume(node);
            }
            case "partition" -> {
                ClientPartition p = partition.orElseThrow();
                p.partition();
                sleepUnlessDone(held, done);
                p.heal();
            }
            default -> throw new IllegalStateException(kind);
        }
        return kind;
    }

    private static void sleepUnlessDone(long millis, AtomicBoolean done) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!done.get() && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
    }

    /** One random operation on a random key; returns its outcome's name. */
    private static String randomOperation(
            RemoteLocker locker,
            List<String> keys,
            Duration wait,
            Random random,
            HistoryRecorder history,
            Map<String, UnguardedAccount> accounts,
            AtomicInteger acquired)
            throws InterruptedException {
        String key = keys.get(random.nextInt(keys.size()));
        int op = random.nextInt(10);
        try {
            if (op < 4) {
                return hold(locker.lock(key, wait), random, history, accounts, acquired)
                        ? "lock"
                        : "lock-lostOnArrival";
            }
            if (op < 7) {
                Optional<RemoteLock> maybe = locker.tryLock(key);
                if (maybe.isEmpty()) {
                    return "tryLock-busy";
                }
                return hold(maybe.get(), random, history, accounts, acquired) ? "tryLock" : "tryLock-lostOnArrival";
            }
            if (op < 8) {
                List<String> two = new ArrayList<>(keys);
                java.util.Collections.shuffle(two, random);
                try (RemoteLockGroup group = locker.lockAll(two.subList(0, 2), wait)) {
                    List<RemoteLock> held = new ArrayList<>();
                    for (RemoteLock lock : group.locks()) {
                        if (recordIfHeld(lock, history)) {
                            held.add(lock);
                            acquired.incrementAndGet();
                        }
                    }
                    for (RemoteLock lock : held) {
                        accounts.computeIfAbsent(lock.key(), k -> new UnguardedAccount())
                                .criticalSection(lock.ownerId());
                    }
                    for (RemoteLock lock : held) {
                        if (lock.isHeld()) {
                            history.releasing(lock);
                        }
                    }
                    return held.size() == group.locks().size() ? "lockAll" : "lockAll-lostOnArrival";
                }
            }
            CompletableFuture<RemoteLock> pending = locker.lockAsync(key, wait);
            Thread.sleep(random.nextInt(30));
            if (pending.cancel(true)) {
                return "lockAsync-cancelled";
            }
            try {
                return hold(pending.get(), random, history, accounts, acquired)
                        ? "lockAsync"
                        : "lockAsync-lostOnArrival";
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

    /**
     * Records {@code lock}'s acquisition if it is still held; false if it was lost between its grant and now. A lease
     * can run out on the way from the grant to the caller (the store faulted, the machine busy): recorded now, that
     * hold would seem granted after holders that came later, with its older fencing token. A lock seen held just
     * before it is recorded is recorded within its hold (short of a pause between the two lines longer than what is
     * left of its validity), so the history keeps the grants' order. A grant left unrecorded is still checked against
     * what the store promised it (its {@code VALID} and {@code FREED} events, see {@link HistoryChecker}).
     */
    private static boolean recordIfHeld(RemoteLock lock, HistoryRecorder history) {
        if (!lock.isHeld()) {
            return false;
        }
        history.acquired(lock);
        lock.onLost(history::lost);
        return true;
    }

    /** Holds {@code lock} for a random while and releases it; false if it was lost before it could be used. */
    private static boolean hold(
            RemoteLock lock,
            Random random,
            HistoryRecorder history,
            Map<String, UnguardedAccount> accounts,
            AtomicInteger acquired)
            throws InterruptedException {
        try {
            if (!recordIfHeld(lock, history)) {
                return false;
            }
            acquired.incrementAndGet();
            accounts.computeIfAbsent(lock.key(), k -> new UnguardedAccount()).criticalSection(lock.ownerId());
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
