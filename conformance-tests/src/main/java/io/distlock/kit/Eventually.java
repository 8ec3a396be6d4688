package io.distlock.kit;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, checking it often: the kit's only way of waiting for something. */
final class Eventually {

    private static final long POLL_NANOS = Duration.ofMillis(10).toNanos();

    private Eventually() {}

    /** Whether {@code condition} became true within {@code deadline}; checks it at least once. */
    static boolean within(Duration deadline, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            Thread.sleep(Math.max(1, Math.min(left, POLL_NANOS) / 1_000_000));
        }
    }

    /** Whether {@code condition} stayed true for the whole of {@code period}, checked every few milliseconds. */
    static boolean holdsFor(Duration period, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + period.toNanos();
        do {
            if (!condition.getAsBoolean()) {
                return false;
            }
            Thread.sleep(POLL_NANOS / 1_000_000);
        } while (System.nanoTime() < end);
        return condition.getAsBoolean();
    }
}
