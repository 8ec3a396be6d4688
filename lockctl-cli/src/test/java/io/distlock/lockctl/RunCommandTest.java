package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import io.distlock.kit.TestTimeouts;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCommandTest {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(10));

    @TempDir
    Path dir;

    @AfterEach
    void stopLosing() {
        LosingProvider.LOSE.set(false);
    }

    @Test
    void run_returnsTheCommandsExitCode() {
        assertThat(Cli.run("run", "--store", "memory://run", "--key", "code", "--", "sh", "-c", "exit 7")
                        .exitCode())
                .isEqualTo(7);
        assertThat(Cli.run("run", "--store", "memory://run", "--key", "code", "--", "true")
                        .exitCode())
                .isZero();
    }

    @Test
    void run_passesKeyOwnerAndFencingToken_andReleasesAfterwards() throws Exception {
        Path seen = dir.resolve("env");
        Cli cli = Cli.run(
                "run",
                "--store",
                "memory://run",
                "--key",
                "env-key",
                "--",
                "sh",
                "-c",
                "echo \"$DISTLOCK_KEY $DISTLOCK_FENCING_TOKEN $DISTLOCK_OWNER_ID\" > " + seen);

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(Files.readString(seen)).matches("env-key \\d+ \\S+\\s*");
        try (RemoteLocker locker = RemoteLockers.open("memory://run")) {
            Optional<RemoteLock> free = locker.tryLock("env-key");
            assertThat(free).as("released after the command").isPresent();
            free.get().close();
        }
    }

    @Test
    void run_waitZero_onAHeldKey_returnsBusyAtOnce() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("memory://run");
                RemoteLock held = locker.lock("busy")) {
            long start = System.nanoTime();
            Cli cli = Cli.run("run", "--store", "memory://run", "--key", "busy", "--wait", "0", "--", "true");
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(cli.exitCode()).isEqualTo(ExitCodes.BUSY);
            assertThat(cli.err()).contains("held by someone else").contains("--wait 0");
            // the default wait is 30 s: one attempt must not wait for the holder
            assertThat(took).isLessThan(TestTimeouts.scaled(Duration.ofSeconds(10)));

            Cli timed = Cli.run("run", "--store", "memory://run", "--key", "busy", "--wait", "200ms", "--", "true");
            assertThat(timed.exitCode()).isEqualTo(ExitCodes.BUSY);
            assertThat(timed.err()).contains("not granted within");
            assertThat(held.isHeld()).isTrue();
        }
    }

    @Test
    void run_commandNotFound_returns127_andReleases() throws Exception {
        Cli cli = Cli.run(
                "run",
                "--store",
                "memory://run",
                "--key",
                "missing",
                "--",
                dir.resolve("nope").toString());

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(cli.err()).contains("command not found").doesNotContain("\tat ");
        try (RemoteLocker locker = RemoteLockers.open("memory://run")) {
            Optional<RemoteLock> free = locker.tryLock("missing");
            assertThat(free).isPresent();
            free.get().close();
        }
    }

    @Test
    void run_lockLostWhileRunning_killsTheCommand_andExits76() throws Exception {
        Path started = dir.resolve("started");
        CompletableFuture<Cli> run = CompletableFuture.supplyAsync(() -> Cli.run(
                "run",
                "--store",
                "losing://run?ttl=900ms",
                "--key",
                "lost",
                "--grace",
                "2s",
                "--",
                "sh",
                "-c",
                "touch " + started + "; exec sleep 120"));
        long deadline =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(20)).toNanos();
        while (!Files.exists(started) && System.nanoTime() < deadline && !run.isDone()) {
            Thread.onSpinWait();
        }
        assertThat(started).as("the command started").exists();

        LosingProvider.LOSE.set(true);
        Cli cli = run.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.LOCK_LOST);
        assertThat(cli.err()).contains("was lost while the command ran").contains("terminated");
    }

    @Test
    void run_forwardsSigtermToTheCommand() throws Exception {
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                LockCtl.class.getName(),
                "run",
                "--store",
                "memory:",
                "--key",
                "signal",
                "--",
                "sh",
                "-c",
                "trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done");
        Process lockctl = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(lockctl.getInputStream(), StandardCharsets.UTF_8));
            String line;
            do {
                line = out.readLine();
            } while (line != null && !line.equals("ready"));
            assertThat(line).as("the command started").isEqualTo("ready");

            lockctl.destroy(); // SIGTERM to lockctl, which passes it on

            assertThat(lockctl.waitFor(
                            TestTimeouts.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(lockctl.exitValue())
                    .as("the command's own exit code from its TERM trap")
                    .isEqualTo(42);
        } finally {
            lockctl.destroyForcibly();
        }
    }

    @Test
    void runRead_sharesWithReaders_andWaitsForAWriter_andIsApartFromTheLock() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("memory://run-rw")) {
            RemoteReadWriteLock rw = locker.readWriteLock("catalog");
            try (RemoteLock reader = rw.readLock().lock(WAIT)) {
                Cli read = Cli.run(
                        "run", "--store", "memory://run-rw", "--key", "catalog", "--read", "--wait", "0", "--", "true");
                assertThat(read.exitCode())
                        .as("a reader beside a reader: " + read.err())
                        .isZero();

                Cli write = Cli.run(
                        "run",
                        "--store",
                        "memory://run-rw",
                        "--key",
                        "catalog",
                        "--write",
                        "--wait",
                        "0",
                        "--",
                        "true");
                assertThat(write.exitCode()).isEqualTo(ExitCodes.BUSY);
                assertThat(write.err()).contains("write lock on 'catalog'").contains("--wait 0");

                Cli lock =
                        Cli.run("run", "--store", "memory://run-rw", "--key", "catalog", "--wait", "0", "--", "true");
                assertThat(lock.exitCode())
                        .as("the lock on the key is not its read-write lock: " + lock.err())
                        .isZero();
                assertThat(reader.isHeld()).isTrue();
            }
            try (RemoteLock writer = rw.writeLock().lock(WAIT)) {
                Cli read = Cli.run(
                        "run",
                        "--store",
                        "memory://run-rw",
                        "--key",
                        "catalog",
                        "--read",
                        "--wait",
                        "200ms",
                        "--",
                        "true");
                assertThat(read.exitCode()).isEqualTo(ExitCodes.BUSY);
                assertThat(read.err()).contains("read lock on 'catalog'").contains("not granted within");
                assertThat(writer.isHeld()).isTrue();
            }
            Path seen = dir.resolve("write-env");
            Cli write = Cli.run(
                    "run",
                    "--store",
                    "memory://run-rw",
                    "--key",
                    "catalog",
                    "--write",
                    "--",
                    "sh",
                    "-c",
                    "echo \"$DISTLOCK_KEY $DISTLOCK_FENCING_TOKEN\" > " + seen);
            assertThat(write.exitCode()).as(write.err()).isZero();
            assertThat(Files.readString(seen)).matches("catalog \\d+\\s*");
            Optional<RemoteLock> free = rw.writeLock().tryLock();
            assertThat(free).as("the write lock released after the command").isPresent();
            free.get().release();
        }
    }

    @Test
    void runPermits_letsNCommandsIn_andNoMore_andRefusesAnotherN() throws Exception {
        try (RemoteLocker first = RemoteLockers.open("memory://run-permits");
                RemoteLocker second = RemoteLockers.open("memory://run-permits")) {
            RemoteLock one = first.semaphore("import", 2).lock(WAIT);
            Cli secondOfTwo = Cli.run(
                    "run",
                    "--store",
                    "memory://run-permits",
                    "--key",
                    "import",
                    "--permits",
                    "2",
                    "--wait",
                    "0",
                    "--",
                    "true");
            assertThat(secondOfTwo.exitCode()).as(secondOfTwo.err()).isZero();

            RemoteLock two = second.semaphore("import", 2).lock(WAIT);
            Cli third = Cli.run(
                    "run",
                    "--store",
                    "memory://run-permits",
                    "--key",
                    "import",
                    "--permits",
                    "2",
                    "--wait",
                    "0",
                    "--",
                    "true");
            assertThat(third.exitCode()).isEqualTo(ExitCodes.BUSY);
            assertThat(third.err()).contains("all 2 permits of the semaphore 'import' are held");

            Cli otherN = Cli.run(
                    "run",
                    "--store",
                    "memory://run-permits",
                    "--key",
                    "import",
                    "--permits",
                    "3",
                    "--wait",
                    "0",
                    "--",
                    "true");
            assertThat(otherN.exitCode()).isEqualTo(ExitCodes.USAGE);
            assertThat(otherN.err().strip().lines()).hasSize(1);
            assertThat(otherN.err()).contains("2 permits").contains("3");

            two.release();
            Cli afterRelease = Cli.run(
                    "run",
                    "--store",
                    "memory://run-permits",
                    "--key",
                    "import",
                    "--permits",
                    "2",
                    "--wait",
                    "0",
                    "--",
                    "true");
            assertThat(afterRelease.exitCode()).as(afterRelease.err()).isZero();
            assertThat(one.isHeld()).isTrue();
            one.release();
        }
    }

    @Test
    void run_readWriteAndPermits_excludeEachOther_andNIsAtLeastOne() {
        Cli both = Cli.run("run", "--store", "memory:", "--key", "k", "--read", "--write", "--", "true");
        assertThat(both.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(both.err()).contains("--read and --write exclude each other");

        Cli permitsAndRead =
                Cli.run("run", "--store", "memory:", "--key", "k", "--permits", "2", "--read", "--", "true");
        assertThat(permitsAndRead.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(permitsAndRead.err()).contains("--read and --permits exclude each other");

        Cli zero = Cli.run("run", "--store", "memory:", "--key", "k", "--permits", "0", "--", "true");
        assertThat(zero.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(zero.err()).contains("--permits must be at least 1").contains("not 0");

        Cli help = Cli.run("run", "--help");
        assertThat(help.out().replaceAll("\\s+", " "))
                .contains("--read", "--write", "--permits")
                .contains("limiting how many hosts run a job at the same time is a common use");
    }

    @Test
    void run_badArguments_oneLineAndUsageCode() {
        Cli missing = Cli.run("run", "--store", "memory:", "--key", "k");
        assertThat(missing.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(missing.err()).contains("Missing command");

        Cli noKey = Cli.run("run", "--store", "memory:", "--", "true");
        assertThat(noKey.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noKey.err()).contains("--key");

        Cli scheme = Cli.run("run", "--store", "zoo://h/x", "--key", "k", "--", "true");
        assertThat(scheme.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(scheme.err().strip().lines()).hasSize(1);
        assertThat(scheme.err())
                .contains("Unknown lock URI scheme 'zoo'")
                .contains("available:")
                .contains("zk");
    }

    /** In a process of its own, as users run it: the ZooKeeper client's reconnect warnings stay out of stderr. */
    @Test
    void run_unreachableZooKeeper_inItsOwnProcess_printsOneLineAndNoStackTrace() throws Exception {
        Process run = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        LockCtl.class.getName(),
                        "run",
                        "--store",
                        "zk://127.0.0.1:1/x?connectTimeout=2s",
                        "--key",
                        "k",
                        "--",
                        "true"))
                .redirectErrorStream(true)
                .start();
        String said = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(run.waitFor(TestTimeouts.scaled(Duration.ofMinutes(1)).toMillis(), TimeUnit.MILLISECONDS))
                .as(said)
                .isTrue();

        assertThat(run.exitValue()).as(said).isEqualTo(ExitCodes.STORE_UNAVAILABLE);
        assertThat(said.strip().lines()).as(said).hasSize(1);
        assertThat(said).contains("127.0.0.1:1").doesNotContain("\tat ");
    }

    @Test
    void run_unreachableStore_oneLineAndStoreCode() {
        Cli cli = Cli.run("run", "--store", "zk://127.0.0.1:1/x?connectTimeout=1s", "--key", "k", "--", "true");
        assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCodes.STORE_UNAVAILABLE);
        assertThat(cli.err().strip().lines()).hasSize(1);
        assertThat(cli.err()).doesNotContain("\tat ");
    }
}
