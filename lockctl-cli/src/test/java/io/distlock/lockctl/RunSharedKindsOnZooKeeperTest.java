package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockKind;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.ZooKeeperEnsemble;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code lockctl run --read/--write/--permits} on a real ZooKeeper server: the read side shared, the write side and
 * the semaphore's bound kept across the command and another client; where the backend does not offer a primitive, one
 * clear line and the usage code.
 */
class RunSharedKindsOnZooKeeperTest {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(20));

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private static String store() {
        return "zk://" + ZK.connectString() + "/run";
    }

    @Test
    void runReadAndWrite_onZooKeeper() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(store())) {
            if (!locker.capabilities().offers(LockKind.READ)) {
                Cli refused = Cli.run("run", "--store", store(), "--key", "catalog", "--read", "--", "true");
                assertThat(refused.exitCode()).as(refused.err()).isEqualTo(ExitCodes.USAGE);
                assertThat(refused.err().strip().lines()).hasSize(1);
                assertThat(refused.err()).contains("offers no read-write locks");
                return;
            }
            try (RemoteLock reader = locker.readWriteLock("catalog").readLock().lock(WAIT)) {
                Cli read =
                        Cli.run("run", "--store", store(), "--key", "catalog", "--read", "--wait", "0", "--", "true");
                assertThat(read.exitCode())
                        .as("a reader beside a reader: " + read.err())
                        .isZero();
                Cli write =
                        Cli.run("run", "--store", store(), "--key", "catalog", "--write", "--wait", "0", "--", "true");
                assertThat(write.exitCode()).as(write.err()).isEqualTo(ExitCodes.BUSY);
                assertThat(reader.isHeld()).isTrue();
            }
            Cli write = Cli.run("run", "--store", store(), "--key", "catalog", "--write", "--wait", "0", "--", "true");
            assertThat(write.exitCode()).as("the reader gone: " + write.err()).isZero();
        }
    }

    @Test
    void runPermits_onZooKeeper() throws Exception {
        try (RemoteLocker locker = RemoteLockers.open(store())) {
            if (!locker.capabilities().offers(LockKind.PERMIT)) {
                Cli refused = Cli.run("run", "--store", store(), "--key", "import", "--permits", "2", "--", "true");
                assertThat(refused.exitCode()).as(refused.err()).isEqualTo(ExitCodes.USAGE);
                assertThat(refused.err().strip().lines()).hasSize(1);
                assertThat(refused.err()).contains("offers no semaphores");
                return;
            }
            try (RemoteLock permit = locker.semaphore("import", 1).lock(WAIT)) {
                Cli busy = Cli.run(
                        "run", "--store", store(), "--key", "import", "--permits", "1", "--wait", "0", "--", "true");
                assertThat(busy.exitCode()).as(busy.err()).isEqualTo(ExitCodes.BUSY);
                assertThat(permit.isHeld()).isTrue();
            }
            Cli free = Cli.run(
                    "run", "--store", store(), "--key", "import", "--permits", "1", "--wait", "0", "--", "true");
            assertThat(free.exitCode())
                    .as("the permit given back: " + free.err())
                    .isZero();
        }
    }
}
