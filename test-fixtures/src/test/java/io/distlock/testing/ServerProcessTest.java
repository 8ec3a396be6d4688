package io.distlock.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.kit.Deadlines;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ServerProcessTest {

    private static ServerProcess sleeper(String name) {
        return ServerProcess.builder(name, List.of("sleep", "600")).build();
    }

    private static String state(long pid) {
        // Third field of /proc/<pid>/stat: R, S, T (stopped), Z ...
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void start_runsProcess_andStopEndsIt() {
        ServerProcess p = sleeper("sleeper");
        p.start();
        long pid = p.pid();
        assertThat(p.isRunning()).isTrue();
        assertThat(ProcessHandle.of(pid))
                .hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());

        p.stop();

        assertThat(p.isRunning()).isFalse();
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
        assertThatThrownBy(p::pid).isInstanceOf(IllegalStateException.class).hasMessageContaining("not running");
    }

    @Test
    void pause_stopsScheduling_andResumeContinues() {
        try (ServerProcess p = sleeper("pausable")) {
            p.start();
            long pid = p.pid();
            p.pause();
            // The signal is delivered asynchronously: the state changes shortly after kill returns.
            Deadlines.await(() -> state(pid).equals("T"), Duration.ofSeconds(5), () -> "not stopped: " + state(pid));
            assertThat(p.isPaused()).isTrue();
            p.resume();
            Deadlines.await(() -> !state(pid).equals("T"), Duration.ofSeconds(5), () -> "not resumed");
            assertThat(p.isPaused()).isFalse();
        }
    }

    @Test
    void stop_ofPausedProcess_terminatesIt() {
        ServerProcess p = sleeper("paused-stop");
        p.start();
        p.pause();
        p.stop();
        assertThat(p.isRunning()).isFalse();
    }

    @Test
    void kill9_endsProcess_andRestartStartsNewOneWithSameCommand() {
        try (ServerProcess p = sleeper("killable")) {
            p.start();
            long first = p.pid();
            p.kill9();
            assertThat(p.isRunning()).isFalse();
            assertThat(p.exitCode()).hasValue(128 + 9);

            p.restart();

            assertThat(p.isRunning()).isTrue();
            assertThat(p.pid()).isNotEqualTo(first);
            assertThat(ProcessHandle.of(p.pid()).flatMap(h -> h.info().commandLine()))
                    .hasValueSatisfying(c -> assertThat(c).contains("sleep 600"));
        }
    }

    @Test
    void stop_alsoEndsProcessesTheServerForked() {
        ServerProcess p = ServerProcess.builder("forker", List.of("sh", "-c", "sleep 600 & wait"))
                .build();
        p.start();
        p.awaitReady(() -> ProcessHandle.of(p.pid()).orElseThrow().children().count() == 1, Duration.ofSeconds(5));
        ProcessHandle child =
                ProcessHandle.of(p.pid()).orElseThrow().children().findFirst().orElseThrow();

        p.stop();

        child.onExit().orTimeout(5, TimeUnit.SECONDS).join();
        assertThat(child.isAlive()).isFalse();
    }

    /** Run in a child JVM by {@link #jvmExit_killsServersStillRunning}: starts a server and exits without stopping it. */
    static final class ExitWithoutStop {
        public static void main(String[] args) {
            ServerProcess p = ServerProcess.builder("orphan-candidate", List.of("sleep", "600"))
                    .build();
            p.start();
            System.out.println(p.pid());
            System.out.flush();
            System.exit(0);
        }
    }

    @Test
    void jvmExit_killsServersStillRunning() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process jvm = new ProcessBuilder(
                        java, "-cp", System.getProperty("java.class.path"), ExitWithoutStop.class.getName())
                .redirectErrorStream(true)
                .start();
        String output = new String(jvm.getInputStream().readAllBytes()).trim();
        assertThat(jvm.waitFor()).as(output).isZero();
        long pid = Long.parseLong(output.substring(output.lastIndexOf('\n') + 1).trim());

        Deadlines.await(
                () -> ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true),
                Duration.ofSeconds(10),
                () -> "server pid " + pid + " outlived its JVM");
    }

    @Test
    void start_waitsForReadinessProbe() {
        AtomicInteger attempts = new AtomicInteger();
        try (ServerProcess p = ServerProcess.builder("probed", List.of("sleep", "600"))
                .readiness(() -> attempts.incrementAndGet() >= 3, Duration.ofSeconds(10))
                .build()) {
            p.start();
            assertThat(attempts).hasValue(3);
        }
    }

    @Test
    void start_failsWithLogTail_whenProcessExitsBeforeReady() {
        ServerProcess p = ServerProcess.builder("crasher", List.of("sh", "-c", "echo bad flag --nope; exit 3"))
                .readiness(() -> false, Duration.ofSeconds(10))
                .build();
        assertThatThrownBy(p::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("crasher exited with code 3")
                .hasMessageContaining("bad flag --nope");
    }

    @Test
    void start_failsAfterDeadline_whenNeverReady() {
        ServerProcess p = ServerProcess.builder("never-ready", List.of("sleep", "600"))
                .readiness(
                        () -> {
                            throw new IllegalStateException("connection refused");
                        },
                        Duration.ofMillis(300))
                .build();
        try {
            assertThatThrownBy(p::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not ready within")
                    .hasMessageContaining("connection refused");
        } finally {
            p.stop();
        }
        assertThat(p.isRunning()).isFalse();
    }

    @Test
    void start_failsClearly_whenProgramIsMissing() {
        ServerProcess p = ServerProcess.builder("missing", List.of("/nonexistent/program"))
                .build();
        assertThatThrownBy(p::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Cannot start missing")
                .hasMessageContaining("/nonexistent/program");
    }

    @Test
    void logFile_receivesOutput() throws Exception {
        ServerProcess p = ServerProcess.builder("echoer", List.of("sh", "-c", "echo hello-from-process; sleep 600"))
                .readiness(() -> true, Duration.ofSeconds(5))
                .build();
        try (p) {
            p.start();
            p.awaitReady(() -> Files.readString(p.logFile()).contains("hello-from-process"), Duration.ofSeconds(5));
        }
        assertThat(p.logFile()).startsWith(Path.of("target").toAbsolutePath());
    }
}
