package io.distlock.zookeeper;

import io.distlock.kit.TestTimeouts;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for a condition with a scaled deadline instead of sleeping a fixed time. */
final class Conditions {

    private Conditions() {}

    /** Waits until {@code condition} holds; fails naming {@code what} if it does not within {@code timeout} (scaled). */
    static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TestTimeouts.scaled(timeout).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("Timed out after " + TestTimeouts.scaled(timeout) + " waiting for " + what);
            }
            Thread.sleep(10);
        }
    }
}
