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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RunCommandTest {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(10));

    @TempDir
    Path dir;

    @AfterEach
    void stopLosing() {
        LosingProvider.LOSE.set(false);
        LosingProvider.CUT_OFF.set(false);
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
            assertThat(timed.err()).contains("not granted within 200ms"); // as the option was given, not PT0.2S
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
        Cli.Running run = runUntilStarted("losing://run?ttl=900ms", "lost", "--grace", "2s");

        LosingProvider.LOSE.set(true);
        Cli cli = run.done().get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.LOCK_LOST);
        assertThat(cli.err()).contains("was lost while the command ran").contains("terminated");
    }

    @Test
    void runOnReleaseRequestTerminate_askedByLocksRequestRelease_terminatesTheCommand_exits77_andFreesTheKey()
            throws Exception {
        String store = "memory://run-asked-" + UUID.randomUUID();
        Cli.Running run = runUntilStarted(
                store, "reindex", "--owner", "reindex job", "--on-release-request=terminate", "--grace", "2s");

        Cli ask = Cli.run("locks", "request-release", "--store", store, "reindex");

        assertThat(ask.exitCode()).as(ask.err()).isZero();
        assertThat(ask.out()).contains("reindex job");
        // the command sleeps 120 s: only its termination ends the run within this bound
        Cli cli = run.done().get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCodes.RELEASE_REQUESTED);
        assertThat(cli.err())
                .contains("lockctl: asked to let go of the lock on 'reindex'; terminating the command"
                        + " (--on-release-request=terminate)")
                .contains("the command was terminated (it exited with 143); releasing the lock");
        try (RemoteLocker locker = RemoteLockers.open(store)) {
            assertThat(locker.inspect("reindex").held())
                    .as("released, not left to expire")
                    .isFalse();
        }
    }

    @Test
    void runOnReleaseRequestIgnore_theDefault_askedToLetGo_saysSo_andKeepsTheLockAndTheCommand() throws Exception {
        String store = "memory://run-ignored-" + UUID.randomUUID();
        Path stop = dir.resolve("stop");
        Path started = dir.resolve("started");
        Cli.Running run = Cli.start(
                "run",
                "--store",
                store,
                "--key",
                "report",
                "--",
                "sh",
                "-c",
                "touch " + started + "; while [ ! -e " + stop + " ]; do sleep 0.05; done; exit 3");
        try {
            awaitStarted(run, started);

            Cli ask = Cli.run("locks", "request-release", "--store", store, "report");

            assertThat(ask.exitCode()).as(ask.err()).isZero();
            String heard = "lockctl: asked to let go of the lock on 'report'; keeping it, the command goes on"
                    + " (--on-release-request=ignore)";
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!run.err().contains(heard) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(run.err()).as("the request reached the holder").contains(heard);
            assertThat(run.done()).as("the command goes on").isNotDone();
            try (RemoteLocker locker = RemoteLockers.open(store)) {
                assertThat(locker.inspect("report").held()).isTrue();
            }
        } finally {
            Files.write(stop, new byte[0]); // a failed test leaves no command running behind it
        }
        Cli cli = run.done().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(cli.exitCode()).as("the command's own code: " + cli.err()).isEqualTo(3);
    }

    @Test
    void run_badOnReleaseRequest_exits2_namingTheChoices() {
        Cli cli = Cli.run("run", "--store", "memory:", "--key", "k", "--on-release-request=stop", "--", "true");

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("'stop' is neither ignore nor terminate");
    }

    @Test
    void runLockDelay_aHolderCutOffFromTheStore_keepsTheKeyTakenForTheDelayAfterItsLease() throws Exception {
        // The holder's renewals and its release cannot reach the store: its lock is lost when its lease runs out and
        // its entry stays. Renewed every second on a 3 s lease, the entry is valid when cut off, so with the delay it
        // keeps the key no earlier than until then + the delay; without, it is free within the 3 s lease.
        String store = "losing://run-delay-" + UUID.randomUUID() + "?ttl=3s";
        Duration delay = Duration.ofSeconds(5);
        Cli.Running run = runUntilStarted(store, "ledger", "--lock-delay", "5s", "--grace", "2s");

        long lose = System.nanoTime();
        LosingProvider.CUT_OFF.set(true);
        Cli cli = run.done().get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCodes.LOCK_LOST);
        LosingProvider.CUT_OFF.set(false);

        try (RemoteLocker next = RemoteLockers.open(store)) {
            Optional<RemoteLock> granted = Optional.empty();
            long deadline = lose + TestTimeouts.scaled(Duration.ofSeconds(30)).toNanos();
            while (granted.isEmpty() && System.nanoTime() < deadline) {
                granted = next.tryLock("ledger");
                if (granted.isEmpty()) {
                    Thread.sleep(50);
                }
            }
            Duration after = Duration.ofNanos(System.nanoTime() - lose);
            assertThat(granted)
                    .as("granted once the lease and the delay are over")
                    .isPresent();
            // without the delay it is granted within the 3 s lease
            assertThat(after).as("granted after").isGreaterThanOrEqualTo(delay);
            granted.get().close();
        }
    }

    @Test
    void runLockDelay_onAStoreThatCannotKeepIt_exits2_namingWhatItOffers() {
        Cli cli = Cli.run("run", "--store", "uninspectable://x", "--key", "k", "--lock-delay", "2s", "--", "true");

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err().strip().lines()).hasSize(1);
        assertThat(cli.err()).contains("offers no lock-delay (it offers [])").contains("lockDelay=2s");
        Cli help = Cli.run("run", "--help");
        assertThat(help.out().replaceAll("\\s+", " "))
                .contains("gives a frozen holder time to notice it lost the lock before the next one writes")
                .contains("--on-release-request=ignore|terminate")
                .contains("77 run --on-release-request=terminate: asked to let go");
    }

    /** Starts {@code lockctl run} on {@code store} and {@code key} with {@code options}, its command a long sleep. */
    private Cli.Running runUntilStarted(String store, String key, String... options) throws InterruptedException {
        Path started = dir.resolve("started-" + key);
        List<String> args = new ArrayList<>(List.of("run", "--store", store, "--key", key));
        args.addAll(List.of(options));
        args.addAll(List.of("--", "sh", "-c", "touch " + started + "; exec sleep 120"));
        Cli.Running run = Cli.start(args.toArray(String[]::new));
        awaitStarted(run, started);
        return run;
    }

    private static void awaitStarted(Cli.Running run, Path started) throws InterruptedException {
        long deadline =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(20)).toNanos();
        while (!Files.exists(started)
                && System.nanoTime() < deadline
                && !run.done().isDone()) {
            Thread.sleep(10);
        }
        assertThat(started).as("the command started: " + run.err()).exists();
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

    /**
     * In a process of its own, as users run it: the clients' own logs stay out of stderr — the ZooKeeper client's
     * reconnect warnings, and what gRPC (under the etcd client) says through {@code java.util.logging} at INFO.
     */
    @ParameterizedTest
    @ValueSource(strings = {"zk://127.0.0.1:1/x?connectTimeout=2s", "etcd://127.0.0.1:1/x?connectTimeout=2s"})
    void run_unreachableStore_inItsOwnProcess_printsOneLineAndNoStackTrace(String uri) throws Exception {
        Process run = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        LockCtl.class.getName(),
                        "run",
                        "--store",
                        uri,
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
