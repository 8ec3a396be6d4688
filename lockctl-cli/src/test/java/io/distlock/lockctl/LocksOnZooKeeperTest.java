package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.ZooKeeperEnsemble;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code lockctl locks} across processes on a real ZooKeeper server: a {@code lockctl run --owner} in another JVM is
 * listed and shown with its label, {@code locks break} deletes its entry, its command is terminated (exit 76), and the
 * next waiter is granted.
 */
class LocksOnZooKeeperTest {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(20));
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LABEL = "nightly backup on db-7";

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private static String store() {
        return "zk://" + ZK.connectString() + "/locks";
    }

    @Test
    void aHolderInAnotherProcess_isListedShownAndBroken_itsCommandTerminated_andTheNextWaiterGranted()
            throws Exception {
        Process holder = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        LockCtl.class.getName(),
                        "run",
                        "--store",
                        store(),
                        "--owner",
                        LABEL,
                        "--key",
                        "backup",
                        "--grace",
                        "1s",
                        "--",
                        "sh",
                        "-c",
                        "echo ready; exec sleep 60"))
                .redirectErrorStream(true)
                .start();
        try {
            BufferedReader holderOut =
                    new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder said = new StringBuilder();
            String line;
            do {
                line = holderOut.readLine();
                said.append(line).append('\n');
            } while (line != null && !line.equals("ready"));
            assertThat(line).as("the other process holds the lock: %s", said).isEqualTo("ready");
            CompletableFuture<Cli> next = CompletableFuture.supplyAsync(() -> Cli.run(
                    "run",
                    "--store",
                    store(),
                    "--owner",
                    "next",
                    "--key",
                    "backup",
                    "--wait",
                    WAIT.toSeconds() + "s",
                    "--",
                    "true"));

            JsonNode shown = waitingOne();
            Cli list = Cli.run("locks", "list", "--store", store());
            Cli show = Cli.run("locks", "show", "--store", store(), "backup");

            assertThat(shown.get("holders")).hasSize(1);
            assertThat(shown.get("holders").get(0).get("ownerLabel").asText()).isEqualTo(LABEL);
            assertThat(shown.get("holders").get(0).get("kind").asText()).isEqualTo("lock");
            assertThat(list.exitCode()).as(list.err()).isZero();
            assertThat(list.out()).contains("backup").contains(LABEL);
            assertThat(show.exitCode()).as(show.err()).isZero();
            assertThat(show.out()).contains(LABEL);

            Cli broken = Cli.run("locks", "break", "--store", store(), "--yes", "backup");

            assertThat(broken.exitCode()).as(broken.err()).isZero();
            assertThat(broken.out()).contains(LABEL);
            assertThat(holder.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("the holder's lockctl ends")
                    .isTrue();
            String rest = new String(holder.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(holder.exitValue()).as(rest).isEqualTo(ExitCodes.LOCK_LOST);
            assertThat(rest).contains("was lost while the command ran");
            Cli granted = next.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(granted.exitCode())
                    .as("the next waiter: " + granted.err())
                    .isZero();
            assertThat(Cli.run("locks", "show", "--store", store(), "backup").out())
                    .isEqualTo("'backup' is free.\n");
        } finally {
            holder.destroyForcibly();
        }
    }

    /** {@code locks show backup --json} once the next run waits for the key, within {@link #WAIT}. */
    private static JsonNode waitingOne() throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        JsonNode shown;
        do {
            Cli show = Cli.run("locks", "show", "--store", store(), "--json", "backup");
            assertThat(show.exitCode()).as(show.err()).isZero();
            shown = JSON.readTree(show.out());
            if (shown.get("waiting").asInt() == 1) {
                return shown;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("no waiter shown within " + WAIT + ": " + shown);
    }
}
