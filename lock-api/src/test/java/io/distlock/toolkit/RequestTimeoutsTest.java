package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shared request timeouts: late requests fail, answered ones cost no timer of their own. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RequestTimeoutsTest {

    private static final Duration SHORT = Duration.ofMillis(50);

    @Test
    void bound_unansweredCommand_failsWithTimeoutAfterItsTimeout() throws Exception {
        RequestTimeouts timeouts = new RequestTimeouts();
        long start = System.nanoTime();
        CompletableFuture<String> command = timeouts.bound(new CompletableFuture<>(), SHORT);

        assertThatThrownBy(() -> command.get(scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(TimeoutException.class);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(SHORT.toNanos());
    }

    @Test
    void bound_answeredCommand_keepsItsAnswer() throws Exception {
        RequestTimeouts timeouts = new RequestTimeouts();
        CompletableFuture<String> command = timeouts.bound(new CompletableFuture<>(), SHORT);
        command.complete("OK");

        // the check at its deadline forgets it, and leaves its answer alone
        long end = System.nanoTime() + scaled(Duration.ofSeconds(5)).toNanos();
        while (timeouts.remembered() != 0) {
            assertThat(System.nanoTime() - end)
                    .as("the answered command was not dropped")
                    .isNegative();
            Thread.sleep(5);
        }
        assertThat(command.get()).isEqualTo("OK");
    }

    /** A release's long timeout armed first must not delay the failure of an attempt's short one sent after it. */
    @Test
    void bound_shortTimeoutAfterALongOne_failsAtItsOwnTimeout() throws Exception {
        RequestTimeouts timeouts = new RequestTimeouts();
        CompletableFuture<String> slow = timeouts.bound(new CompletableFuture<>(), Duration.ofMinutes(5));
        CompletableFuture<String> fast = timeouts.bound(new CompletableFuture<>(), SHORT);

        assertThatThrownBy(() -> fast.get(scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(TimeoutException.class);
        assertThat(slow).isNotDone();
    }

    /**
     * The point of the class: a stream of commands, each answered well within its timeout, arms a check about once
     * per timeout, not once per command (orTimeout armed and cancelled a timer for each).
     */
    @Test
    void bound_streamOfAnsweredCommands_armsAboutOneCheckPerTimeout() throws Exception {
        RequestTimeouts timeouts = new RequestTimeouts();
        Duration timeout = Duration.ofMillis(100);
        int commands = 500;
        long start = System.nanoTime();
        for (int i = 0; i < commands; i++) {
            CompletableFuture<String> command = timeouts.bound(new CompletableFuture<>(), timeout);
            command.complete("OK");
            Thread.sleep(0, 500_000);
        }
        long elapsedTimeouts = (System.nanoTime() - start) / timeout.toNanos() + 1;

        assertThat(timeouts.armings()).isLessThanOrEqualTo(2 * elapsedTimeouts);
    }

    /** {@code base} times the {@code distlock.test.timeout.factor} system property, as the kit scales its timeouts. */
    private static Duration scaled(Duration base) {
        double factor = Double.parseDouble(System.getProperty("distlock.test.timeout.factor", "1"));
        return Duration.ofNanos((long) (base.toNanos() * Math.max(1, factor)));
    }
}
