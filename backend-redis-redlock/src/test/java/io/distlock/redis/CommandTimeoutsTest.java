package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The per-master command timeouts: late commands fail, answered ones cost no timer of their own. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class CommandTimeoutsTest {

    private static final Duration SHORT = Duration.ofMillis(50);

    @Test
    void bound_unansweredCommand_failsWithTimeoutAfterItsTimeout() throws Exception {
        CommandTimeouts timeouts = new CommandTimeouts();
        long start = System.nanoTime();
        CompletableFuture<String> command = timeouts.bound(new CompletableFuture<>(), SHORT);

        assertThatThrownBy(() ->
                        command.get(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(TimeoutException.class);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(SHORT.toNanos());
    }

    @Test
    void bound_answeredCommand_keepsItsAnswer() throws Exception {
        CommandTimeouts timeouts = new CommandTimeouts();
        CompletableFuture<String> command = timeouts.bound(new CompletableFuture<>(), SHORT);
        command.complete("OK");

        // the check at its deadline forgets it, and leaves its answer alone
        Deadlines.await(
                () -> timeouts.remembered() == 0,
                TestTimeouts.scaled(Duration.ofSeconds(5)),
                () -> "the answered command was not dropped");
        assertThat(command.get()).isEqualTo("OK");
    }

    /** A release's long timeout armed first must not delay the failure of an attempt's short one sent after it. */
    @Test
    void bound_shortTimeoutAfterALongOne_failsAtItsOwnTimeout() throws Exception {
        CommandTimeouts timeouts = new CommandTimeouts();
        CompletableFuture<String> slow = timeouts.bound(new CompletableFuture<>(), Duration.ofMinutes(5));
        CompletableFuture<String> fast = timeouts.bound(new CompletableFuture<>(), SHORT);

        assertThatThrownBy(() ->
                        fast.get(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(TimeoutException.class);
        assertThat(slow).isNotDone();
    }

    /**
     * The point of the class: a stream of commands, each answered well within its timeout, arms a check about once
     * per timeout, not once per command (orTimeout armed and cancelled a timer for each).
     */
    @Test
    void bound_streamOfAnsweredCommands_armsAboutOneCheckPerTimeout() throws Exception {
        CommandTimeouts timeouts = new CommandTimeouts();
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
}
