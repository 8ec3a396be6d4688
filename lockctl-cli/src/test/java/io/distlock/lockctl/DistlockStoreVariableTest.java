package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every command given no {@code --store} takes {@code DISTLOCK_STORE}; {@code --store} wins; a blank one is refused. */
class DistlockStoreVariableTest {

    private static final Map<String, String> UNKNOWN = Map.of(DefaultStore.VARIABLE, "nosuch://h/x");

    @TempDir
    Path dir;

    @Test
    void run_withoutStore_takesDistlockStore() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open("memory://from-env");
                RemoteLock held = locker.lock("k")) {
            Cli cli = Cli.run(
                    Map.of(DefaultStore.VARIABLE, "memory://from-env"),
                    "run",
                    "--key",
                    "k",
                    "--wait",
                    "0",
                    "--",
                    "true");

            assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCodes.BUSY);
            assertThat(held.isHeld()).isTrue();
            assertThat(cli.err()).doesNotContain(RunCommand.PRIVATE_STORE);
        }
    }

    @Test
    void run_storeOption_winsOverDistlockStore() {
        Cli cli = Cli.run(UNKNOWN, "run", "--store", "memory://from-option", "--key", "k", "--", "true");

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(cli.err()).doesNotContain(RunCommand.PRIVATE_STORE);
    }

    @Test
    void run_onAStoreNamingTheEmbeddedHost_saysOnStderrThatItLocksWithinItselfOnly() {
        Cli cli = Cli.run(Map.of(DefaultStore.VARIABLE, "zk://embedded/mine"), "run", "--key", "k", "--", "true");

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(cli.err().strip().lines()).containsExactly(RunCommand.PRIVATE_EMBEDDED);
        assertThat(cli.err()).contains("lockctl store");
    }

    @Test
    void run_onTheEmbeddedDefault_saysOnStderrThatItLocksWithinItselfOnly() {
        Cli cli = Cli.run("run", "--key", "k", "--", "true");

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(cli.err().strip().lines()).containsExactly(RunCommand.PRIVATE_STORE);
        assertThat(cli.err()).contains("lockctl store").contains("export DISTLOCK_STORE=");
        assertThat(cli.out()).isEmpty();
    }

    @Test
    void blankDistlockStore_isRefused_namingIt() {
        Cli cli = Cli.run(Map.of(DefaultStore.VARIABLE, " "), "run", "--key", "k", "--", "true");

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err().strip().lines()).hasSize(1);
        assertThat(cli.err()).contains("DISTLOCK_STORE is set but blank");
    }

    @Test
    void everyCommand_withoutStore_takesDistlockStore() {
        String out = dir.toString();
        for (String[] args : new String[][] {{"bench", "--out", out}, {"demo"}, {"conformance"}, {"time-service"}}) {
            Cli cli = Cli.run(UNKNOWN, args);

            assertThat(cli.exitCode()).as(args[0] + ": " + cli.err()).isEqualTo(ExitCodes.USAGE);
            assertThat(cli.err()).as(args[0]).contains("'nosuch'");
        }
        // time-service takes cassandra:// alone: a closed port shows which store it tried
        Cli cli = Cli.run(Map.of(DefaultStore.VARIABLE, "cassandra://127.0.0.1:1/x"), "time-service");
        assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCodes.STORE_UNAVAILABLE);
        assertThat(cli.err()).contains("127.0.0.1:1");
    }

    @Test
    void conformanceAndTimeService_withNeitherStoreNorVariable_sayWhatIsMissing() {
        for (String command : new String[] {"conformance", "time-service"}) {
            Cli cli = Cli.run(command);

            assertThat(cli.exitCode()).as(command).isEqualTo(ExitCodes.USAGE);
            assertThat(cli.err()).as(command).contains("Missing --store").contains("DISTLOCK_STORE");
        }
    }
}
