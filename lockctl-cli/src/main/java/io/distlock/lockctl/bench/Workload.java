package io.distlock.lockctl.bench;

import io.distlock.LockKind;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What each acquisition of a run takes: the lock on the key ({@code lock}); the read or the write side of the
 * read-write lock on the key, a read with probability {@code readShare} ({@code read-heavy}); or one permit of the
 * semaphore of {@code permits} permits on the key ({@code semaphore}).
 *
 * @param name {@value #LOCK_NAME}, {@value #READ_HEAVY_NAME}, {@value #SEMAPHORE_NAME} or {@value #FAILOVER_NAME}
 * @param readShare the share of reads, between 0 and 1 ({@code read-heavy}; else 0)
 * @param permits the semaphore's permits ({@code semaphore}; else 1)
 */
public record Workload(String name, double readShare, int permits) {

    /** The lock on the key, every acquisition. */
    public static final String LOCK_NAME = "lock";
    /** The read-write lock on the key. */
    public static final String READ_HEAVY_NAME = "read-heavy";
    /** A permit of the semaphore on the key. */
    public static final String SEMAPHORE_NAME = "semaphore";

    /** No acquisitions: the candidates of an election, whose leader steps down or is killed, round by round. */
    public static final String FAILOVER_NAME = "failover";

    /** Every acquisition takes the lock on its key. */
    public static final Workload LOCK = new Workload(LOCK_NAME, 0, 1);

    /** Reads a {@code bench.json} written before workloads, which has none, as the lock workload. */
    public Workload {
        name = name == null ? LOCK_NAME : name;
        permits = Math.max(permits, 1);
    }

    /** The failover workload ({@link Engine#failover}). */
    public static final Workload FAILOVER = new Workload(FAILOVER_NAME, 0, 1);

    /** Reads (with probability {@code readShare}) and writes of the read-write lock on the key. */
    public static Workload readHeavy(double readShare) {
        return new Workload(READ_HEAVY_NAME, readShare, 1);
    }

    /** One permit of the semaphore of {@code permits} permits on the key, every acquisition. */
    public static Workload semaphore(int permits) {
        return new Workload(SEMAPHORE_NAME, 0, permits);
    }

    /** Whether acquisitions take the read or the write side of a read-write lock. */
    public boolean readWrite() {
        return name.equals(READ_HEAVY_NAME);
    }

    /**
     * How many holders one key may have at once: 1 for a lock, the permits for a semaphore, unbounded ({@link
     * Integer#MAX_VALUE}) for reads.
     */
    int sharedLimit() {
        return switch (name) {
            case SEMAPHORE_NAME -> permits;
            case READ_HEAVY_NAME -> Integer.MAX_VALUE;
            default -> 1;
        };
    }

    /**
     * The chooser of one party's acquisitions: the same sequence for a party in every run with the same seed, so that
     * stores compared side by side take the same mix.
     */
    Chooser chooser(int party) {
        SplittableRandom random = new SplittableRandom(0x5DEECE66DL * (party + 1));
        return () -> switch (name) {
            case READ_HEAVY_NAME -> random.nextDouble() < readShare ? LockKind.READ : LockKind.WRITE;
            case SEMAPHORE_NAME -> LockKind.PERMIT;
            default -> LockKind.LOCK;
        };
    }

    /** One line for the console and the report, e.g. {@code read-heavy (90 % reads)}. */
    public String describe() {
        return switch (name) {
            case READ_HEAVY_NAME ->
                String.format(Locale.ROOT, "%s (read-write lock, %s %% reads)", name, percent(readShare));
            case SEMAPHORE_NAME -> String.format(Locale.ROOT, "%s (%d permits)", name, permits);
            case FAILOVER_NAME ->
                "failover (an election's leader steps down or is killed; the next one's first 'you lead')";
            default -> name;
        };
    }

    private static String percent(double share) {
        return java.math.BigDecimal.valueOf(share * 100)
                .setScale(2, java.math.RoundingMode.HALF_UP)
                .stripTrailingZeros()
                .toPlainString();
    }

    /** Picks what the next acquisition takes. */
    @FunctionalInterface
    interface Chooser {
        LockKind next();
    }
}
