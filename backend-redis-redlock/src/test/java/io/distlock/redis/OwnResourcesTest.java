package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.Deadlines;
import io.distlock.testing.FreePorts;
import io.distlock.testing.StandardError;
import io.distlock.toolkit.HostList.Address;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The Lettuce threads of a locker's own clients. */
class OwnResourcesTest {

    /**
     * Closing them logs nothing while connection attempts to a master that refuses them are timing out. Each attempt
     * arms a timer that, a connect timeout later, has a computation thread close the attempt's channel; shut down all
     * at once, as Lettuce does, the I/O threads could end before that close reached them, and Netty logged an ERROR
     * with a stack trace ("Failed to submit a listener notification task. Event loop shut down?") for each: twice in
     * one CI run, as lockers closed after a master's restart. Here a thousand attempts time out together in Lettuce's
     * timer tick (100 ms) after the connect timeout, and each round closes at another point of that tick.
     */
    @Test
    void close_whileRefusedAttemptsTimeOut_logsNoErrorFromLettucesEventLoops() throws Exception {
        Address refusing = new Address("127.0.0.1", FreePorts.next()); // nothing listens there
        Duration connectTimeout = Duration.ofMillis(200);
        ConnectionSettings connection = ConnectionSettings.plaintext();
        String logged = StandardError.during(() -> {
            for (int round = 0; round < 9; round++) {
                OwnResources resources = new OwnResources();
                OwnClient client = new OwnClient(
                        connection.redisUri(refusing, connectTimeout),
                        connection.clientOptions(connectTimeout),
                        resources.lettuce());
                long start = System.nanoTime();
                List<CompletableFuture<?>> attempts = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    attempts.add(client.connect());
                }
                for (CompletableFuture<?> attempt : attempts) {
                    // refused, or on a loaded machine timed out first: either way, not connected
                    assertThatThrownBy(attempt::join).isInstanceOf(CompletionException.class);
                }
                long closeAt = start + connectTimeout.plusMillis(13L * round).toNanos();
                Thread.sleep(Math.max(0, (closeAt - System.nanoTime()) / 1_000_000));
                client.close();
                resources.close();
                // Whatever the threads still log is logged by now.
                Deadlines.await(
                        resources::terminated,
                        Duration.ofSeconds(10),
                        () -> "Lettuce's computation or I/O threads still run 10 s after the close");
            }
        });
        assertThat(logged).doesNotContain("Event loop shut down").doesNotContain(" ERROR ");
    }
}
