package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host {@code process}: a ZooKeeper server ({@code QuorumPeerMain}, standalone) in a child JVM of its own, started
 * for the command, shared by every spec that names it, and gone (process and directory) when the command ends, whether
 * it succeeded or failed.
 */
class ProcessZooKeeperTest {

    @TempDir
    Path dir;

    @Test
    void start_serverInItsOwnProcess_locksThere_closeKillsItAndRemovesItsDirectory() throws Exception {
        ProcessZooKeeper server = ProcessZooKeeper.start();
        ProcessHandle child = server.handle();
        Path data = server.directory();
        try (server) {
            assertThat(child.pid())
                    .as("a process of its own")
                    .isNotEqualTo(ProcessHandle.current().pid());
            assertThat(child.parent().map(ProcessHandle::pid))
                    .contains(ProcessHandle.current().pid());
            assertThat(childServers()).containsExactly(child);
            try (RemoteLocker one = RemoteLockers.open(server.uri("process-test"));
                    RemoteLocker other = RemoteLockers.open(server.uri("process-test"))) {
                RemoteLock lock = one.lock("k", Duration.ofSeconds(30));
                assertThat(other.tryLock("k")).as("held by the first locker").isEmpty();
                lock.release();
                other.tryLock("k").orElseThrow().release();
            }
        }
        assertThat(child.isAlive()).as("the server's process after close").isFalse();
        assertThat(Files.exists(data)).as("its directory after close").isFalse();
    }

    @Test
    void lockctlKilledBySigkill_theServerEndsAndRemovesItsDirectory() throws Exception {
        Process lockctl = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        ProcessZooKeeperHolder.class.getName())
                .redirectError(dir.resolve("holder.log").toFile())
                .start();
        try {
            String[] line;
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(lockctl.getInputStream(), StandardCharsets.UTF_8))) {
                line = out.readLine().split(" ", 2);
            }
            ProcessHandle server = ProcessHandle.of(Long.parseLong(line[0])).orElseThrow();
            Path data = Path.of(line[1]);
            assertThat(Files.isDirectory(data)).isTrue();

            lockctl.destroyForcibly(); // SIGKILL: no close, no shutdown hook

            server.onExit().get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(server.isAlive()).isFalse();
            assertThat(Files.exists(data))
                    .as("the server's directory after lockctl's death")
                    .isFalse();
        } finally {
            lockctl.destroyForcibly();
        }
    }

    @Test
    void bench_processHost_fairAndUnfairOnOneChildServer_freshWorkers_measureAndLeaveNoProcessBehind()
            throws Exception {
        Path out = dir.resolve("report");
        Cli.Running running = Cli.start(
                "bench",
                "--store",
                "zk://process/bench",
                "--store",
                "unfair:zk://process/bench",
                "--processes",
                "2",
                "--acquisitions",
                "20",
                "--warm-up",
                "0",
                "--no-charts",
                "--out",
                out.toString());
        long deadline =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(60)).toNanos();
        List<ProcessHandle> during = childServers();
        while (during.isEmpty() && !running.done().isDone() && System.nanoTime() < deadline) {
            Thread.sleep(20);
            during = childServers();
        }
        Cli cli =
                running.done().get(TestTimeouts.scaled(Duration.ofSeconds(120)).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(during).as("one ZooKeeper server process during the run").hasSize(1);

        JsonNode json = report(out);
        String fair = json.get("stores").get(0).asText();
        assertThat(fair).matches("zk://127\\.0\\.0\\.1:\\d+/bench");
        assertThat(json.get("stores").get(1).asText())
                .as("both specs name one server")
                .isEqualTo("unfair:" + fair);
        assertThat(json.get("runs")).hasSize(2);
        for (JsonNode run : json.get("runs")) {
            assertThat(run.get("summary").get("acquisitions").asInt()).isEqualTo(40);
        }
        assertThat(json.get("command").asText()).contains("--warm-up 0");
        assertThat(childServers()).as("ZooKeeper server processes left running").isEmpty();
    }

    @Test
    void bench_processHostBesideAStoreThatCannotOpen_failsAndLeavesNoProcessBehind() {
        Cli cli = Cli.run(
                "bench",
                "--store",
                "zk://process/bench",
                "--store",
                "zk://process/bench?bogus=1",
                "--acquisitions",
                "5",
                "--out",
                dir.resolve("failed").toString());

        assertThat(cli.exitCode()).as(cli.out()).isNotZero();
        assertThat(cli.err()).contains("bogus");
        assertThat(childServers()).as("ZooKeeper server processes left running").isEmpty();
    }

    @Test
    void defaultStore_zkAndCuratorSpecsNamingTheProcessHost_nameOneServer() throws Exception {
        try (DefaultStore store =
                DefaultStore.unless(List.of("zk://process/a", "peer:curator://process/b?x=1"), "bench")) {
            List<String> uris = store.uris(List.of("zk://process/a", "peer:curator://process/b?x=1"));
            assertThat(uris.get(0)).matches("zk://127\\.0\\.0\\.1:\\d+/a");
            String address = uris.get(0).substring("zk://".length(), uris.get(0).lastIndexOf('/'));
            assertThat(uris.get(1)).isEqualTo("peer:curator://" + address + "/b?x=1");
            assertThat(childServers()).as("one server for both").hasSize(1);
        }
        assertThat(childServers()).isEmpty();
    }

    @Test
    void run_onTheProcessHost_locksThere_saysItLocksWithinItselfOnly_andLeavesNoProcessBehind() {
        Cli cli = Cli.run("run", "--store", "zk://process/mine", "--key", "k", "--", "true");

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(cli.err().strip().lines()).containsExactly(RunCommand.PRIVATE_PROCESS);
        assertThat(childServers()).isEmpty();
    }

    /** This JVM's live descendants that run a {@link ProcessZooKeeper}. */
    private static List<ProcessHandle> childServers() {
        return ProcessHandle.current()
                .descendants()
                .filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains(ProcessZooKeeper.MARKER))
                .toList();
    }
}
