package io.distlock.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for a condition with a (scaled) deadline, polling; no fixed sleeps elsewhere. */
final class Deadlines {

    private static final long POLL_MILLIS = 20;

    private Deadlines() {}

    /**
     * Blocks until {@code condition} is true, polling every 20 ms.
     *
     * @throws IllegalStateException with {@code failure} if it is still false after {@code timeout} (scaled by {@link
     *     TestTimeouts})
     */
    static void await(BooleanSupplier condition, Duration timeout, Supplier<String> failure) {
        Duration scaled = TestTimeouts.scaled(timeout);
        long deadline = System.nanoTime() + scaled.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(failure.get() + " within " + scaled.toMillis() + " ms");
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted: " + failure.get(), e);
            }
        }
    }
}
