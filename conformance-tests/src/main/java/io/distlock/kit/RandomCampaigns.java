package io.distlock.kit;

import io.distlock.LockException;
import io.distlock.RemoteLocker;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The randomized run's candidates ({@link RandomizedFaultRunContract}): in one election, each campaign joins as a new
 * candidate, waits a random while to lead, leads a random while, then leaves, or steps down and leaves a random while
 * later (leading again meanwhile, if its turn comes). Each candidate's beliefs go to the run's history as holds of the
 * election's key ({@link Candidate#joinUnderFaults}), so the run's checker finds two leaders believed at once, or
 * epochs that do not grow, among the faults the locks meet.
 */
final class RandomCampaigns {

    private final String election;
    private final Duration wait;
    private final HistoryRecorder history;
    private final AtomicInteger joined = new AtomicInteger();
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    private final LongAdder toldNotCurrent = new LongAdder();

    /**
     * @param election the election's name
     * @param wait how long a candidate waits to lead, at most
     * @param history where beliefs are recorded
     */
    RandomCampaigns(String election, Duration wait, HistoryRecorder history) {
        this.election = election;
        this.wait = wait;
        this.history = history;
    }

    /** The key of the election's lock, whose holds are the candidates' beliefs. */
    String key(RemoteLocker locker) {
        return locker.election(election).key();
    }

    /** How many campaigns ended in each outcome so far, each name prefixed {@code election-}. */
    Map<String, Long> outcomes() {
        Map<String, Long> counts = new TreeMap<>();
        outcomes.forEach((outcome, count) -> counts.put("election-" + outcome, count.sum()));
        if (toldNotCurrent.sum() > 0) {
            counts.put("election-toldNotCurrent", toldNotCurrent.sum());
        }
        return counts;
    }

    /**
     * One campaign through {@code locker} as a new candidate; a failed call ({@link LockException}) is counted by its
     * name and backs off 10 ms, as {@link RandomOperations#runOne} does.
     */
    void runOne(RemoteLocker locker, Random random) throws InterruptedException {
        String outcome;
        try {
            outcome = campaign(locker, random);
        } catch (LockException e) {
            outcome = e.getClass().getSimpleName();
            Thread.sleep(10);
        }
        outcomes.computeIfAbsent(outcome, k -> new LongAdder()).increment();
    }

    private String campaign(RemoteLocker locker, Random random) throws InterruptedException {
        Candidate candidate =
                Candidate.joinUnderFaults(locker.election(election), "kit-" + joined.incrementAndGet(), history);
        try {
            boolean led =
                    candidate.candidacy().awaitLeadership(Duration.ofMillis(1 + random.nextInt((int) wait.toMillis())));
            if (!led) {
                return "waited";
            }
            Thread.sleep(random.nextInt(100));
            if (random.nextBoolean()) {
                candidate.stepDown();
                Thread.sleep(random.nextInt(100));
                return "steppedDown";
            }
            return "led";
        } finally {
            candidate.leave();
            toldNotCurrent.add(candidate.toldNotCurrent());
        }
    }
}
