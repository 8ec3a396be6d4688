package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LeaderElection;
import io.distlock.LockException;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryEvent;
import io.distlock.kit.history.HistoryRecorder;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long randomized run, after Jepsen's shape: a generator of operations, a nemesis of faults and a checker over the
 * whole history. {@value #LOCKERS} lockers x {@value #THREADS_PER_LOCKER} threads in the test's JVM and, where other
 * processes can reach the store ({@link #multiProcessSupport()}), {@value #PROCESSES} worker processes x {@value
 * #THREADS_PER_LOCKER} threads run random {@code lock}, {@code tryLock}, {@code lockAll}, {@code lockAsync} then
 * cancel, hold and release operations ({@link RandomOperations}) on {@value #KEYS} keys until the budget of
 * acquisitions is spent (and at least one fault was injected and undone), while a nemesis thread injects random faults
 * from those the fixture offers (the whole store stopped and started, a minority of nodes killed or paused, the
 * proxied locker cut off), undoes each after a random while, and injects the next only once the store has granted a
 * lock again since. Where the backend's elections are tested ({@link Need#ELECTION}), one candidate per locker of the
 * test's JVM campaigns in an election meanwhile ({@link RandomCampaigns}), its beliefs recorded beside the holds.
 * Every failed call must be a {@link LockException};
 * the merged history of all processes must show no overlap, no validity that outlived its lock and growing fencing
 * tokens; nothing may be left once leases run out.
 *
 * <p>The budget is {@value #BUDGET_PROPERTY} (default {@value #DEFAULT_BUDGET} acquisitions, a bounded run for CI),
 * counted over every process of the run: the test's JVM and the workers, which report theirs as they go (the summary
 * gives both parts). {@code
 * -D}{@value #BUDGET_PROPERTY}{@code =100000} makes it the long run. The seed of the random choices is logged and can
 * be fixed with {@value #SEED_PROPERTY} (the workers' choices follow from it too, though their timing does not).
 */
public interface RandomizedFaultRunContract extends LockerFixture {

    /** The system property with the run's budget of acquisitions. */
    String BUDGET_PROPERTY = "distlock.kit.randomized.acquisitions";

    /** The system property that fixes the seed of the run's random choices. */
    String SEED_PROPERTY = "distlock.kit.randomized.seed";

    /** The budget of a run in CI. */
    int DEFAULT_BUDGET = 150;

    /** Lockers of the run in the test's JVM; with a client partition, the last reaches the store through the proxies. */
    int LOCKERS = 3;

    /** Worker processes of the run, where other processes can reach the store. */
    int PROCESSES = 2;

    /** Threads per locker, in the test's JVM and in each worker. */
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
        Optional<String> workerUri = multiProcessSupport().workerUri();
        log.info(
                "Randomized run: {} acquisitions, {} worker processes, seed {} (-D{}={} repeats its choices)",
                budget,
                workerUri.isPresent() ? PROCESSES : 0,
                seed,
                SEED_PROPERTY,
                seed);
        StoreFaults faults = storeFaults().orElseThrow();
        Optional<NodeFaults> nodes = faults.nodeFaults().filter(n -> n.nodeCount() > n.quorum());
        Optional<ClientPartition> partition = faults.clientPartition();
        String base = TestKeys.unique("randomized");
        List<String> keys = RandomOperations.keys(base, KEYS);
        Duration connectTimeout = TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT);
        Duration wait = TestTimeouts.scaled(Duration.ofSeconds(3));
        Map<String, LongAdder> injected = new ConcurrentHashMap<>();
        AtomicBoolean done = new AtomicBoolean();
        List<RemoteLocker> lockers = new ArrayList<>();
        Random seeds = new Random(seed);
        Optional<Workers> workers = workerUri.isPresent()
                ? Optional.of(Workers.create(workerUri.get(), shortLeaseTime(), maxWait()))
                : Optional.empty();
        HistoryRecorder history = workers.map(
                        w -> HistoryRecorder.toDirectory(w.dir().resolve("history")))
                .orElseGet(HistoryRecorder::inMemory);
        RandomOperations operations = new RandomOperations(keys, wait, history);
        // Where the backend's elections are tested (Need.ELECTION), one candidate per locker campaigns beside the locks
        Optional<RandomCampaigns> campaigns =
                Need.ELECTION.missing(this, Lockers.capabilities(this)).isEmpty()
                        ? Optional.of(new RandomCampaigns(base + "-election", wait, history))
                        : Optional.empty();
        int campaigners = campaigns.isPresent() ? LOCKERS : 0;
        // Every process's acquisitions count against the budget: the workers report theirs as they go.
        LongSupplier acquired =
                () -> operations.acquired() + workers.map(Workers::progress).orElse(0L);
        try {
            long workerSeed = seeds.nextLong();
            if (workers.isPresent()) { // started first: they open the store while this JVM's lockers do
                for (int p = 0; p < PROCESSES; p++) {
                    workers.get()
                            .start(
                                    "random",
                                    base,
                                    THREADS_PER_LOCKER,
                                    KEYS,
                                    wait.toMillis(),
                                    Map.of(
                                            "seed", Long.toString(workerSeed + p),
                                            "connectTimeoutMillis", Long.toString(connectTimeout.toMillis())));
                }
            }
            for (int i = 0; i < LOCKERS; i++) {
                boolean proxied = partition.isPresent() && i == LOCKERS - 1;
                lockers.add((proxied ? partition.get().lockerBuilder() : lockerBuilder())
                        .connectTimeout(connectTimeout)
                        .leaseTime(shortLeaseTime())
                        // the election's grants are the candidates' beliefs, recorded by the candidates
                        .provider(new InterceptingProvider(
                                provider(),
                                InterceptingProvider.recording(history)
                                        .ignoring(key -> key.startsWith(LeaderElection.KEY_PREFIX))))
                        .build());
            }
            if (workers.isPresent()) {
                workers.get().awaitLine("OPEN", Workers.startup());
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
                                // The next fault only once the store grants again: a one-node store that restarts
                                // for seconds, faulted again at once, would spend the run down and grant nothing.
                                long healed = acquired.getAsLong();
                                while (!done.get() && acquired.getAsLong() <= healed) {
                                    Thread.sleep(10);
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "kit-nemesis");
            nemesis.setDaemon(true);
            int operators = LOCKERS * THREADS_PER_LOCKER;
            long[] threadSeeds = new long[operators + campaigners];
            for (int t = 0; t < threadSeeds.length; t++) {
                threadSeeds[t] = seeds.nextLong();
            }
            nemesis.start();
            Duration runLimit = maxWait().multipliedBy(Math.max(3, budget / 50));
            Map<String, Long> workerTotals = Map.of();
            Map<String, Long> outcomes = new TreeMap<>();
            try {
                Concurrently.run("randomized", threadSeeds.length, runLimit, t -> {
                    Random random = new Random(threadSeeds[t]);
                    RemoteLocker locker = lockers.get(t % LOCKERS);
                    // Until the budget is spent and a first fault was undone: a fast store spends a small budget
                    // before the nemesis has injected anything.
                    while (acquired.getAsLong() < budget || injected.isEmpty()) {
                        if (t < operators) {
                            operations.runOne(locker, random);
                        } else {
                            campaigns.orElseThrow().runOne(locker, random);
                        }
                    }
                });
            } finally {
                if (workers.isPresent()) {
                    Files.writeString(workers.get().dir().resolve("stop"), "");
                }
                done.set(true);
                nemesis.join(maxWait().toMillis());
                nemesis.interrupt();
                faults.startStore();
                nodes.ifPresent(NodeFaults::restoreAll);
                partition.ifPresent(ClientPartition::heal);
            }
            outcomes.putAll(operations.outcomes());
            campaigns.ifPresent(c -> outcomes.putAll(c.outcomes()));
            List<HistoryEvent> events = history.events();
            if (workers.isPresent()) {
                // A worker ends its operation in progress: a wait, then the store's timeouts while it was faulted
                // (the worker URI's own connectTimeout, if it gives one, is at most the workers' startup).
                workerTotals = workers.get()
                        .awaitDone(wait.plus(connectTimeout.multipliedBy(3))
                                .plus(maxWait())
                                .plus(Workers.startup().multipliedBy(3)));
                for (Worker worker : workers.get().all()) {
                    for (String outcome : worker.lines("OUTCOMES").get(0).split(" ")) {
                        String[] kv = outcome.split("=");
                        if (kv.length == 2) {
                            outcomes.merge(kv[0], Long.parseLong(kv[1]), Long::sum);
                        }
                    }
                }
                events = HistoryChecker.read(workers.get().dir().resolve("history"));
            }
            List<String> violations = HistoryChecker.violations(events);
            log.info(
                    "Randomized run: {} acquisitions ({} in this JVM, {} in {} worker processes), outcomes {}, faults"
                            + " injected {}, violations {}",
                    operations.acquired() + workerTotals.getOrDefault("sections", 0L),
                    operations.acquired(),
                    workerTotals.getOrDefault("sections", 0L),
                    workers.map(w -> w.all().size()).orElse(0),
                    outcomes,
                    new TreeMap<>(injected),
                    violations.size());
            if (!violations.isEmpty() && workers.isPresent()) {
                // a long run's evidence: its seed repeats its choices, not the store's timing
                workers.get().keep();
                log.warn(
                        "The randomized run's history files are kept for inspection in {} (seed {})",
                        workers.get().dir().resolve("history"),
                        seed);
            }
            HistoryChecker.assertConsistent(events);
            assertTrue(!injected.isEmpty(), "the run ended before the nemesis injected a single fault");
            operations.assertNoOverlap();
            List<String> used = new ArrayList<>(keys);
            campaigns.ifPresent(c -> used.add(c.key(lockers.get(0))));
            Lockers.assertNothingLeft(
                    this,
                    lockers.get(0),
                    shortLeaseTime().plus(expirySlack()).plus(maxWait()),
                    used.toArray(String[]::new));
        } finally {
            for (RemoteLocker locker : lockers) {
                try {
                    locker.close();
                } catch (RuntimeException e) {
                    log.warn("Closing a locker after the randomized run failed: {}", e.toString());
                }
            }
            history.close();
            workers.ifPresent(Workers::close);
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
}
