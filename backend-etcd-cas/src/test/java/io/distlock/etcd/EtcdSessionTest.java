package io.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.EtcdCluster;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The backend's sessions (etcd leases): one claim of a name at a time, no extra lease left once waiters are served,
 * the validity a lock reports.
 */
class EtcdSessionTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    /**
     * A lock name is claimed in a session by one attempt at a time, and only that attempt gives it back. An attempt
     * whose put went unanswered gives the name back twice: when the put's late answer lets it delete its key, and when
     * the session's background deletion of that key ends. The second give-back used to free the claim of the attempt
     * that had taken the name since; a third attempt of the locker then took the same queue key and deleted the
     * holder's key as stale (a 100,000-acquisition run: a holder's key deleted under it, the next holder granted with
     * a higher fencing token than its own).
     */
    @Test
    void sessionClaim_givenBackLateByItsFormerOwner_staysWithItsNewOwner() throws Exception {
        Duration ttl = Duration.ofSeconds(5);
        Deadline deadline = Deadline.after(Duration.ofSeconds(10), Ticker.system());
        try (LockBackend backend = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            Sessions sessions = ((EtcdLockBackend) backend).sessions();
            EtcdSession first = sessions.claim("name", "former", deadline).get(10, TimeUnit.SECONDS);
            first.unclaim("name", "former");
            EtcdSession second = sessions.claim("name", "holder", deadline).get(10, TimeUnit.SECONDS);
            assertThat(second).as("the session whose claim was given back").isSameAs(first);

            first.unclaim("name", "former"); // the late second give-back

            EtcdSession third = sessions.claim("name", "third", deadline).get(10, TimeUnit.SECONDS);
            assertThat(third)
                    .as("the session a third attempt gets while the holder has the name")
                    .isNotSameAs(first);
            third.unclaim("name", "third");
            first.unclaim("name", "holder");
        }
    }

    /**
     * In fair mode a session queues for a name once, so K concurrent {@code lockAsync} calls of one
     * locker on one key need K sessions (etcd leases, each kept alive). Once they are served and released, the extra
     * ones are revoked: the locker is back to one lease.
     */
    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void concurrentLockAsync_onOneKey_leaveNoExtraLeases(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("leases");
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(5));
        int k = 5;
        try (RemoteLocker holderLocker = locker(mode, ttl);
                RemoteLocker waiters = locker(mode, ttl)) {
            int baseline = leasesInEtcd();
            RemoteLock held = holderLocker.lock(key, maxWait());
            List<CompletableFuture<ReleaseResult>> pending = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                pending.add(waiters.lockAsync(key, maxWait()).thenApply(RemoteLock::release)); // in grant order
            }
            if (mode == EtcdLockMode.FAIR) {
                awaitKeyCount(mode, key, k + 1, k + " waiters did not queue");
                assertEquals(baseline + k - 1, leasesInEtcd(), "leases while " + k + " waiters of one locker queue");
            }
            held.release();
            for (CompletableFuture<ReleaseResult> next : pending) {
                assertEquals(ReleaseResult.RELEASED, next.get(maxWait().toMillis(), TimeUnit.MILLISECONDS));
            }
            awaitLeases(baseline, "every waiter was served and released");
            assertNothingLeft(mode, key, "every waiter released");
        }
    }

    /**
     * In cas mode an acquisition takes any usable session. When the locker's session is lost, the acquisitions that
     * come before a new one is granted each found none and each granted one; nothing is claimed in cas mode, so nothing
     * retired the extra ones, and their leases were kept alive for the locker's life (here 4 leases more than
     * expected). The first granted now serves them all, and the others are revoked at once.
     */
    @Test
    void casMode_acquisitionsThatFindTheSessionLost_leaveOneNewLease() throws Exception {
        int k = 5;
        Duration ttl = TestTimeouts.scaled(Duration.ofSeconds(3));
        Deadline deadline = Deadline.after(maxWait(), Ticker.system());
        try (LockBackend backend = backend(EtcdLockMode.CAS, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            Sessions sessions = ((EtcdLockBackend) backend).sessions();
            int baseline = leasesInEtcd(); // the backend's session among them
            EtcdSession lost = sessions.any(deadline).get(10, TimeUnit.SECONDS);
            inspector.getLeaseClient().revoke(lost.id()).get(10, TimeUnit.SECONDS);
            assertTrue(Deadlines.within(maxWait(), lost::isLost), "the session never learned its lease was revoked");

            // Each call finds no usable session: none of the grants has been answered when the next one asks.
            List<CompletableFuture<EtcdSession>> found = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                found.add(sessions.any(deadline));
            }
            List<EtcdSession> sessionsFound = new ArrayList<>();
            for (CompletableFuture<EtcdSession> f : found) {
                sessionsFound.add(f.get(10, TimeUnit.SECONDS));
            }
            assertThat(sessionsFound)
                    .as("the sessions %d acquisitions got after the loss", k)
                    .allSatisfy(s -> assertThat(s).isSameAs(sessionsFound.get(0)));
            assertThat(sessionsFound.get(0).isUsable()).isTrue();
            awaitLeases(baseline, k + " acquisitions found the session lost (the lost one revoked, one granted)");
            Lease lease = backend.tryAcquire(request(EtcdTesting.unique("after-loss"), ttl))
                    .orElseThrow();
            assertTrue(backend.release(lease));
        }
    }

    /**
     * A retired session (nothing of it left, its revoke about to be sent) adopts no grant: retirement and adoption
     * exclude each other. Before, adoption asked only whether the session was lost, which the revoke marks a moment
     * after the retirement: a grant adopted in between would have held a key the revoke deletes, told only by the
     * key's watch. (No path to it was found: a fair attempt holds its claim, which keeps the session from retiring,
     * from before its put until its release.)
     */
    @Test
    void aRetiredSession_adoptsNoGrant() throws Exception {
        Duration ttl = Duration.ofSeconds(5);
        Deadline deadline = Deadline.after(Duration.ofSeconds(10), Ticker.system());
        try (LockBackend backend = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            EtcdSession spare =
                    ((EtcdLockBackend) backend).sessions().grant(deadline).get(10, TimeUnit.SECONDS);
            assertTrue(spare.retireIfIdle(), "a session with nothing of it left did not retire");
            EtcdLease grant = new EtcdLease(
                    "k",
                    "owner",
                    "owner",
                    PREFIX + "/k/" + spare.hexId(),
                    null,
                    null,
                    1,
                    0,
                    spare,
                    reason -> {},
                    null,
                    ttl);
            assertFalse(spare.adopt(grant), "a retired session adopted a grant");
            spare.close(deadline).get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The validity a lock reports is the send time of the grant (or the last answered keep-alive) plus
     * the TTL, less a drift allowance of TTL/100 + 2 ms (as ZooKeeper's and Redlock's): the leader counts the TTL on
     * its own monotonic clock from its receipt, and the two clocks may run at slightly different rates (NTP slews a
     * monotonic clock by up to 500 ppm). Measured on a ticker that does not move, so the arithmetic is exact.
     */
    @Test
    void validUntil_isSendTimePlusTtl_lessDriftAllowance() throws Exception {
        Duration ttl = Duration.ofSeconds(30);
        io.distlock.toolkit.ManualTicker ticker = new io.distlock.toolkit.ManualTicker();
        long sent = ticker.read();
        BackendConfig config = new BackendConfig(
                URI.create(EtcdTesting.uri(ETCD, PREFIX)),
                Map.of(),
                ttl,
                Duration.ofSeconds(10),
                ticker,
                Clock.systemUTC());
        try (LockBackend backend = new EtcdLockBackendProvider().open(config)) {
            Lease lease = backend.tryAcquire(request(EtcdTesting.unique("validity"), ttl))
                    .orElseThrow();
            long drift = ttl.toNanos() / 100 + TimeUnit.MILLISECONDS.toNanos(2);
            assertEquals(
                    sent + ttl.toNanos() - drift, lease.validUntilNanos(), "validity = sent + TTL - (TTL/100 + 2 ms)");
            assertTrue(backend.release(lease));
        }
    }

    /** Waits for etcd to hold {@code expected} leases; fails naming {@code after} and the count if it does not. */
    private void awaitLeases(int expected, String after) throws InterruptedException {
        assertTrue(
                Deadlines.within(maxWait(), () -> {
                    try {
                        return leasesInEtcd() == expected;
                    } catch (Exception e) {
                        return false;
                    }
                }),
                () -> "leases after " + after + ": " + leasesCount() + ", expected " + expected);
    }
}
