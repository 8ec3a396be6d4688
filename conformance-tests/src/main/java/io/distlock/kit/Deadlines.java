package io.distlock.kit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Waiting for a condition with a deadline, checking it every few milliseconds: the fixtures' and the kit's only way
 * of waiting for something (no fixed sleeps elsewhere).
 */
public final class Deadlines {

    private static final long POLL_MILLIS = 10;

    private Deadlines() {}

    /**
     * Blocks until {@code condition} is true.
     *
     * @param timeout the longest wait, before scaling by {@link TestTimeouts}
     * @throws IllegalStateException with {@code failure} if it is still false after the scaled {@code timeout}, or if
     *     the thread is interrupted (the interrupt flag is kept)
     */
    public static void await(BooleanSupplier condition, Duration timeout, Supplier<String> failure) {
        Duration scaled = TestTimeouts.scaled(timeout);
        try {
            if (!within(scaled, condition)) {
                throw new IllegalStateException(failure.get() + " within " + scaled.toMillis() + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted: " + failure.get(), e);
        }
    }

    /**
     * Whether {@code condition} became true within {@code deadline} (used as given, not scaled); checks it at least
     * once.
     */
    public static boolean within(Duration deadline, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            Thread.sleep(Math.max(1, Math.min(left / 1_000_000, POLL_MILLIS)));
        }
    }

    /**
     * What is left until {@code endNanos} (a {@link System#nanoTime} value), at least a nanosecond: the bound for the
     * next of several calls that share one deadline, which a call given a zero or negative wait would refuse.
     */
    public static Duration leftUntil(long endNanos) {
        return Duration.ofNanos(Math.max(1, endNanos - System.nanoTime()));
    }

    /**
     * Blocks until {@code value} has stayed the same for {@code period} (a backend's request count once its wait is
     * parked and nothing of it is in flight), and returns that value; both durations are used as given, not scaled.
     *
     * @throws IllegalStateException with {@code what} if it never stood still within {@code timeout}
     */
    public static long steady(LongSupplier value, Duration period, Duration timeout, String what)
            throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            long seen = value.getAsLong();
            if (holdsFor(period, () -> value.getAsLong() == seen)) {
                return seen;
            }
            if (System.nanoTime() - end >= 0) {
                throw new IllegalStateException(what + " never stood still for " + period.toMillis() + " ms within "
                        + timeout.toMillis() + " ms; last " + value.getAsLong());
            }
        }
    }

    /** Whether {@code condition} stayed true for the whole of {@code period} (used as given, not scaled). */
    public static boolean holdsFor(Duration period, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + period.toNanos();
        do {
            if (!condition.getAsBoolean()) {
                return false;
            }
            Thread.sleep(POLL_MILLIS);
        } while (System.nanoTime() - end < 0);
        return condition.getAsBoolean();
    }
}
