package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A lease's renewal and release on one node, for either algorithm: a write timeout on a release's delete or a
 * renewal's rewrite is sent again, and no rewrite, delivered late or sent again, brings a released cell back.
 */
class RenewalAndReleaseTest extends OneNodeFixture {

    /**
     * A renewal reads the owner cell (still ours), the holder releases, then the renewal's rewrite
     * is delivered. It must not bring the released cells back: the tables stay empty and another locker's {@code
     * lock(key, 2s)} succeeds.
     */
    @Test
    void renewal_rewriteDeliveredAfterRelease_bringsNoCellBack() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key("renew-" + algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease);
                    CassandraLockBackend b = open("algorithm=" + algorithm, lease)) {
                CassandraLease held =
                        (CassandraLease) a.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(a.algorithm().renewalCheck(held))
                        .as("the renewal finds the owner cell")
                        .isTrue();
                assertThat(a.release(held)).isTrue();

                OptionalLong renewed = a.algorithm().renewalRewrite(held, lease);
                assertReleasedForGood(algorithm, key, renewed, b, lease);
            }
        }
    }

    /**
     * After a renewal that raced its lease's release: the tables hold nothing of {@code key}, {@code other}'s {@code
     * lock(key, 2s)} succeeds, and the renewal answered that the lease is gone.
     */
    private static void assertReleasedForGood(
            String algorithm, String key, OptionalLong renewed, CassandraLockBackend other, Duration lease)
            throws InterruptedException {
        assertThat(cellsOf(key))
                .as(algorithm + ": the released cells stay deleted")
                .isEmpty();
        Optional<Lease> next = other.acquire(
                request(key, lease), Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(2)), Ticker.system()));
        assertThat(next)
                .as(algorithm + ": another locker takes the released key")
                .isPresent();
        assertThat(other.release(next.get())).isTrue();
        assertThat(renewed).as(algorithm + ": a renewal of a released lease").isEmpty();
    }

    /**
     * A node dies while a release's delete is in flight: the coordinator answers a write timeout (a replica it still
     * believed alive did not acknowledge; {@link CassandraCalls#replicaTimeoutNext}). The delete is sent again, so the release
     * answers as if nothing happened and leaves nothing behind, instead of failing and leaving the key held until its
     * TTL (the driver's default retry policy sends no write again after a write timeout).
     */
    @Test
    void release_writeTimeoutOnADelete_isSentAgain_andFreesTheKey() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        Map<String, List<String>> deletes = Map.of(
                "queue", List.of("deleting the owner cell", "deleting the queue cell"),
                "legacy", List.of("deleting the main cell"));
        for (Map.Entry<String, List<String>> algorithm : deletes.entrySet()) {
            for (String delete : algorithm.getValue()) {
                String key = key("release-timeout-" + algorithm.getKey());
                try (CassandraLockBackend a = open("algorithm=" + algorithm.getKey(), lease)) {
                    Lease held = a.tryAcquire(request(key, lease)).orElseThrow();
                    a.calls().replicaTimeoutNext(delete);
                    assertThat(a.release(held))
                            .as(algorithm.getKey() + ": the release, a write timeout " + delete)
                            .isTrue();
                    assertThat(cellsOf(key))
                            .as(algorithm.getKey() + ": cells after the release")
                            .isEmpty();
                }
            }
        }
    }

    /**
     * A node dies while a renewal's rewrite is in flight (a write timeout, as above). The rewrite, which the driver
     * never sends twice, is sent again through the lease's fence, and the renewal extends the lease.
     */
    @Test
    void renewal_writeTimeoutOnTheRewrite_isSentAgain_andExtendsTheLease() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key("renew-timeout-" + algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease)) {
                CassandraLease held =
                        (CassandraLease) a.tryAcquire(request(key, lease)).orElseThrow();
                long grantedUntil = held.validUntilNanos();
                a.calls().replicaTimeoutNext("renewing the lease");
                OptionalLong renewed = a.renew(held, lease);
                assertThat(renewed)
                        .as(algorithm + ": a renewal whose rewrite timed out once")
                        .isPresent();
                assertThat(renewed.getAsLong()).isGreaterThan(grantedUntil);
                assertThat(a.release(held)).isTrue();
                assertThat(cellsOf(key)).isEmpty();
            }
        }
    }

    /**
     * The rewrite's resend must keep what its non-idempotence protects: the holder releases between a rewrite that
     * timed out (applied, its answer lost) and the resend. No resend may follow the release's deletes, or it would
     * bring the released cells back for a whole TTL: the renewal reports the lease gone, the tables stay empty and
     * another locker's {@code lock(key, 2s)} succeeds.
     */
    @Test
    void renewal_releasedBetweenATimedOutRewriteAndItsResend_bringsNoCellBack() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key("renew-resend-" + algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease);
                    CassandraLockBackend b = open("algorithm=" + algorithm, lease)) {
                CassandraLease held =
                        (CassandraLease) a.tryAcquire(request(key, lease)).orElseThrow();
                AtomicReference<Boolean> released = new AtomicReference<>();
                a.calls().replicaTimeoutNext("renewing the lease");
                a.calls().beforeRewriteResend(() -> released.set(a.release(held)));
                OptionalLong renewed = a.renew(held, lease);
                assertThat(released.get())
                        .as(algorithm + ": the release between the timed-out rewrite and its resend")
                        .isTrue();
                assertReleasedForGood(algorithm, key, renewed, b, lease);
            }
        }
    }
}
