package io.distlock.internal;

import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Test waits of lock-api's own tests: by condition, each bounded by a timeout scaled as the kit's are. */
final class Waits {

    private Waits() {}

    /** {@code base} times the {@code distlock.test.timeout.factor} system property. */
    static Duration scaled(Duration base) {
        double factor = Double.parseDouble(System.getProperty("distlock.test.timeout.factor", "1"));
        return Duration.ofNanos((long) (base.toNanos() * Math.max(1, factor)));
    }

    /** Waits until {@code condition} holds, at most {@code base} scaled; fails naming {@code what} otherwise. */
    static void until(String what, Duration base, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + scaled(base).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("Timed out after " + DurationText.of(scaled(base)) + " waiting for " + what);
            }
            Thread.sleep(5);
        }
    }
}
