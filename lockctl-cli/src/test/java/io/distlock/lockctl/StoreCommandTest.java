package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.TestTimeouts;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code lockctl store}: a server the {@code lockctl run}s of other terminals share, until stopped. */
class StoreCommandTest {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(20));
    private static final Pattern EXPORT =
            Pattern.compile("export DISTLOCK_STORE=(zk://127\\.0\\.0\\.1:(\\d+)/lockctl)");

    @TempDir
    Path dir;

    @Test
    void store_printsTheExportLine_runsOnItExcludeEachOther_andItStopsOnInterrupt() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicInteger code = new AtomicInteger(-1);
        Thread store = new Thread(
                () -> code.set(LockCtl.commandLine(new PrintWriter(out, true), new PrintWriter(err, true), Map.of())
                        .execute("store", "--port", "0")));
        store.start();
        try {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!out.toString().contains("\n") && store.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Matcher export = EXPORT.matcher(out.toString().lines().findFirst().orElse(""));
            assertThat(export.matches())
                    .as("first line of %s (stderr: %s)", out, err)
                    .isTrue();
            Map<String, String> env = Map.of(DefaultStore.VARIABLE, export.group(1));

            Path started = dir.resolve("started");
            Path release = dir.resolve("release");
            CompletableFuture<Cli> holder = CompletableFuture.supplyAsync(() -> Cli.run(
                    env,
                    "run",
                    "--key",
                    "shared",
                    "--",
                    "sh",
                    "-c",
                    "touch " + started + "; while [ ! -e " + release + " ]; do sleep 0.05; done"));
            while (!Files.exists(started) && !holder.isDone() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(started).as("the first run holds the lock").exists();

            Cli other = Cli.run(env, "run", "--key", "shared", "--wait", "0", "--", "true");
            assertThat(other.exitCode()).as(other.err()).isEqualTo(ExitCodes.BUSY);
            assertThat(other.err()).contains("held by someone else");

            Files.createFile(release);
            Cli first = holder.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(first.exitCode()).as(first.err()).isZero();
            assertThat(first.err()).doesNotContain(RunCommand.PRIVATE_STORE);

            store.interrupt();
            store.join(WAIT.toMillis());
            assertThat(store.isAlive()).as("stopped on interrupt").isFalse();
            assertThat(code.get()).as(err.toString()).isEqualTo(ExitCodes.OK);
            int port = Integer.parseInt(export.group(2));
            assertThatThrownBy(() -> new Socket("127.0.0.1", port).close())
                    .as("the server closed its port")
                    .isInstanceOf(IOException.class);
        } finally {
            store.interrupt();
        }
    }

    @Test
    void store_onAPortInUse_exits2_sayingSo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Cli cli = Cli.run("store", "--port", Integer.toString(taken.getLocalPort()));

            assertThat(cli.exitCode()).isEqualTo(ExitCodes.USAGE);
            assertThat(cli.err())
                    .contains("port " + taken.getLocalPort())
                    .contains("in use")
                    .contains("--port 0");
            assertThat(cli.out()).isEmpty();
        }
    }
}
