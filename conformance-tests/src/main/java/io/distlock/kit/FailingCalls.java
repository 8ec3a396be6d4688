package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/** Checks of calls that must fail, fast and with the right exception, while the store is faulted. */
final class FailingCalls {

    /** A call to the locker that must fail. */
    @FunctionalInterface
    interface Call {
        Object call() throws Exception;
    }

    private FailingCalls() {}

    /**
     * Asserts that {@code call} throws one of {@code expected} (with a message) within {@code bound}: not later, not a
     * hang, not a success. A lock it returned anyway is released.
     *
     * @param condition the fault, for the message, e.g. "with the store down"
     */
    @SafeVarargs
    static void assertFailsWithin(
            String what, String condition, Duration bound, Call call, Class<? extends Exception>... expected) {
        long start = System.nanoTime();
        Object outcome;
        ExecutorService caller = Executors.newSingleThreadExecutor();
        Future<Object> running = caller.submit(call::call);
        try {
            outcome = running.get(bound.multipliedBy(2).toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            outcome = e.getCause();
        } catch (TimeoutException e) {
            outcome = "nothing: it still waits (a hang)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = "nothing: the test was interrupted";
        } finally {
            running.cancel(true);
            caller.shutdownNow();
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        Object granted = outcome instanceof Optional<?> maybe ? maybe.orElse(null) : outcome;
        if (granted instanceof AutoCloseable lock) {
            try {
                lock.close();
            } catch (Exception ignored) {
                // reported below
            }
        }
        Object result = outcome;
        if (Arrays.stream(expected).noneMatch(type -> type.isInstance(result))) {
            fail(what + " " + condition + " must fail with "
                    + Arrays.stream(expected).map(Class::getSimpleName).collect(Collectors.joining(" or "))
                    + ", but it " + (result instanceof Throwable ? "threw " + result : "returned " + result)
                    + " after " + DurationText.of(took));
        }
        assertTrue(
                took.compareTo(bound) <= 0,
                what + " " + condition + " failed only after " + DurationText.of(took) + ", later than "
                        + DurationText.of(bound) + ": " + result);
        assertTrue(((Throwable) result).getMessage() != null, what + ": " + result + " without a message");
    }
}
