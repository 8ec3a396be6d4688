package io.distlock.kit.selftest;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Ticker;
import io.distlock.spi.LockRequest;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The self-test's file store reports what a TTL store would hold: nothing once a lease ran out unreleased. */
class FileLockBackendTest {

    @TempDir
    Path dir;

    @Test
    void entries_ofALockNeverReleased_areGoneOnceItsLeaseRanOut() throws Exception {
        FileLockBackend store = new FileLockBackend(dir, Ticker.system(), FileLockBackend.Defect.NONE);
        // Long enough that the first look comes within it on a loaded machine (200 ms did not, at load 30).
        Duration lease = Duration.ofSeconds(1);
        // A holder that could not release (the store was down when it tried) leaves its lock file behind.
        assertThat(store.tryAcquire(new LockRequest("k", "holder", lease, reason -> {})))
                .isPresent();
        assertThat(FileLockBackend.entries(dir, "k")).as("held").hasSize(1);

        Thread.sleep(lease.multipliedBy(2).toMillis());

        assertThat(FileLockBackend.entries(dir, "k"))
                .as("a lease that ran out is held by nobody")
                .isEmpty();
        assertThat(store.tryAcquire(new LockRequest("k", "next", lease, reason -> {})))
                .as("and the key can be taken")
                .isPresent();
    }

    @Test
    void entries_ofTheNeverExpiringVariant_stayAfterTheLease() throws Exception {
        FileLockBackend store = new FileLockBackend(dir, Ticker.system(), FileLockBackend.Defect.NEVER_EXPIRES);
        Duration lease = Duration.ofMillis(200);
        assertThat(store.tryAcquire(new LockRequest("k", "holder", lease, reason -> {})))
                .isPresent();

        Thread.sleep(lease.multipliedBy(2).toMillis());

        assertThat(FileLockBackend.entries(dir, "k"))
                .as("what the broken store keeps is reported")
                .hasSize(1);
    }
}
