package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fair mode shares etcd's {@code concurrency.Mutex} layout, so the real {@code etcdctl lock} (installed with the
 * {@code etcd-client} package; {@code scripts/test} installs it) and distlock exclude each other both ways, and
 * distlock's look-up shows etcdctl's holder.
 */
class EtcdctlInteropTest {

    private static final String PREFIX = "/interop";

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @TempDir
    Path dir;

    private static Duration maxWait() {
        return TestTimeouts.scaled(Duration.ofSeconds(20));
    }

    private static RemoteLocker locker() {
        return RemoteLockers.builder()
                .uri(EtcdTesting.uri(ETCD, PREFIX))
                .leaseTime(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .build();
    }

    /** {@code etcdctl lock <prefix>/<name>} running a shell that prints HELD and holds until {@code release} exists. */
    private final class EtcdctlLock implements AutoCloseable {
        final Etcdctl etcdctl;
        final Path release;

        EtcdctlLock(String name) {
            release = dir.resolve("release-" + name);
            etcdctl = Etcdctl.start(
                    ETCD,
                    "lock",
                    PREFIX + "/" + name,
                    "--",
                    "sh",
                    "-c",
                    "echo HELD; while [ ! -e '" + release + "' ]; do sleep 0.05; done");
        }

        boolean holds() {
            return etcdctl.printed("HELD");
        }

        List<String> output() {
            return etcdctl.output();
        }

        int releaseAndExit() throws Exception {
            Files.writeString(release, "");
            return etcdctl.awaitExit(maxWait());
        }

        @Override
        public void close() throws Exception {
            Files.writeString(release, "");
            etcdctl.close();
        }
    }

    private static List<String> queueKeys(String name) {
        return EtcdTesting.lockKeys(ETCD, PREFIX, name, EtcdLockMode.FAIR);
    }

    @Test
    void etcdctlHolds_distlockWaits_thenGetsItOnRelease() throws Exception {
        String name = EtcdTesting.unique("etcdctl-first");
        try (EtcdctlLock etcdctl = new EtcdctlLock(name);
                RemoteLocker locker = locker()) {
            Deadlines.await(etcdctl::holds, maxWait(), () -> "etcdctl lock did not take the lock: " + etcdctl.output());
            assertFalse(locker.tryLock(name).isPresent(), "distlock's tryLock while etcdctl holds the lock");
            CompletableFuture<RemoteLock> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return locker.lock(name, maxWait());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Deadlines.await(
                    () -> {
                        try {
                            return queueKeys(name).size() == 2;
                        } catch (Exception e) {
                            return false;
                        }
                    },
                    maxWait(),
                    () -> "distlock's waiter did not queue behind etcdctl's key");
            assertTrue(queueKeys(name).stream().allMatch(k -> k.matches(PREFIX + "/" + name + "/[0-9a-f]+")));
            // etcdctl's key holds no value: distlock's look-up shows the key itself, which names its lease
            LockState state = locker.inspect(name);
            assertEquals(1, state.holders().size(), "the holders shown: " + state);
            LockHolder holder = state.holders().get(0);
            assertTrue(holder.ownerId().matches(PREFIX + "/" + name + "/[0-9a-f]+"), "etcdctl's owner id: " + holder);
            assertEquals(holder.ownerId(), holder.ownerLabel(), "etcdctl's label");
            assertEquals(OptionalInt.of(1), state.waiting(), "distlock's waiter behind etcdctl");
            assertTrue(
                    Deadlines.holdsFor(TestTimeouts.scaled(Duration.ofMillis(500)), () -> !waiting.isDone()),
                    "distlock got the lock while etcdctl held it");
            assertEquals(0, etcdctl.releaseAndExit(), "etcdctl's exit code; output " + etcdctl.output());
            try (RemoteLock lock = waiting.get(maxWait().toMillis(), TimeUnit.MILLISECONDS)) {
                assertTrue(lock.isHeld());
            }
        }
        assertEquals(List.of(), queueKeys(name), "keys left behind");
    }

    @Test
    void distlockHolds_etcdctlWaits_thenGetsItOnRelease() throws Exception {
        String name = EtcdTesting.unique("distlock-first");
        try (RemoteLocker locker = locker()) {
            RemoteLock lock = locker.lock(name, maxWait());
            try (EtcdctlLock etcdctl = new EtcdctlLock(name)) {
                Deadlines.await(
                        () -> {
                            try {
                                return queueKeys(name).size() == 2;
                            } catch (Exception e) {
                                return false;
                            }
                        },
                        maxWait(),
                        () -> "etcdctl did not queue behind distlock's key: " + etcdctl.output());
                assertTrue(
                        Deadlines.holdsFor(TestTimeouts.scaled(Duration.ofMillis(500)), () -> !etcdctl.holds()),
                        "etcdctl got the lock while distlock held it: " + etcdctl.output());
                lock.close();
                Deadlines.await(
                        etcdctl::holds, maxWait(), () -> "etcdctl did not get the released lock: " + etcdctl.output());
                assertFalse(locker.tryLock(name).isPresent(), "distlock's tryLock while etcdctl holds the lock");
                assertEquals(0, etcdctl.releaseAndExit(), "etcdctl's exit code; output " + etcdctl.output());
            }
        }
        assertEquals(List.of(), queueKeys(name), "keys left behind");
    }
}
