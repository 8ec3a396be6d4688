package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.fail;

import io.distlock.testing.EtcdCluster;
import io.distlock.testing.ServerNode;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.LeaseOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd 3.4.23's lease flaw around a stalled leader, shown on the store alone (no distlock code on the path): a lease kept
 * alive every 200 ms through the two followers of a three-member cluster, while the leader is frozen ({@code SIGSTOP})
 * for longer than the lease's TTL, is sometimes revoked just after the leader thaws, within the TTL of a keep-alive etcd
 * had answered. The deposed leader's lessor, not yet demoted, revokes the leases it saw expire while it was frozen, and
 * its proposal is applied (etcd-io/etcd#12528, #15247; fixed upstream after 3.4.23). A client holding a lock through
 * the two live members loses its key with most of its TTL to run: what etcd.md lists as not promised on etcd 3.4.23.
 *
 * <p>It is random (about 1 cycle in 15 on Debian's etcd 3.4.23 here) and slow (about 7 s a cycle), so it runs only on
 * demand: {@code -Ddistlock.etcd.deposedLeaderFlaw=true} (cycles at most: {@code -Ddistlock.etcd.deposedLeaderCycles},
 * default 60). It passes when a cycle shows the flaw, and fails when none did: on an etcd with the fix, that is the
 * expected outcome (and the cue to revisit the docs).
 */
@EnabledIfSystemProperty(named = EtcdDeposedLeaderLeaseTest.PROPERTY, matches = "true")
class EtcdDeposedLeaderLeaseTest {

    static final String PROPERTY = "distlock.etcd.deposedLeaderFlaw";

    private static final Logger LOG = LoggerFactory.getLogger(EtcdDeposedLeaderLeaseTest.class);
    private static final long TTL_SECONDS = 2; // well above the election timeout (500 ms)
    private static final Duration KEEP_ALIVE_EVERY = Duration.ofMillis(200);
    private static final Duration FROZEN = Duration.ofSeconds(3); // longer than the TTL: the lease expires in its view
    private static final Duration WATCHED_AFTER_THAW = Duration.ofSeconds(3);

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(3).build();

    @Test
    void leaseKeptAliveThroughTheFollowers_whileTheLeaderIsFrozen_isRevokedByTheThawedLeader_withinAnAnsweredTtl()
            throws Exception {
        int cycles = Integer.getInteger("distlock.etcd.deposedLeaderCycles", 60);
        List<String> outcomes = new ArrayList<>();
        for (int cycle = 1; cycle <= cycles; cycle++) {
            String outcome = cycle();
            LOG.info("Cycle {} of at most {}: {}", cycle, cycles, outcome);
            outcomes.add(outcome);
            if (outcome.startsWith("REVOKED")) {
                return;
            }
        }
        fail("no cycle of " + cycles + " showed the deposed leader's revocation (an etcd with the fix?): " + outcomes);
    }

    /**
     * One cycle: a new lease kept alive through the two followers, the leader frozen and thawed, the lease watched.
     * Returns {@code REVOKED ...} with the timings when the lease went within the TTL of an answered keep-alive.
     */
    private static String cycle() throws Exception {
        int leader = EtcdTesting.leader(ETCD);
        ServerNode frozen = ETCD.member(leader);
        List<String> followers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            if (i != leader) {
                followers.add("http://" + ETCD.member(i).endpoint());
            }
        }
        try (Client client =
                Client.builder().endpoints(followers.toArray(String[]::new)).build()) {
            // The send time of the latest request etcd answered for the lease (its grant, then each keep-alive
            // answered with a TTL > 0): the lease is promised until that instant plus the TTL.
            AtomicLong lastAnsweredSentAt = new AtomicLong(System.nanoTime());
            long lease = client.getLeaseClient()
                    .grant(TTL_SECONDS)
                    .get(10, TimeUnit.SECONDS)
                    .getID();
            ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
            try {
                timer.scheduleAtFixedRate(
                        () -> {
                            long sent = System.nanoTime();
                            CompletableFuture<LeaseKeepAliveResponse> answer =
                                    client.getLeaseClient().keepAliveOnce(lease);
                            answer.thenAccept(r -> {
                                if (r.getTTL() > 0) {
                                    lastAnsweredSentAt.accumulateAndGet(sent, Math::max);
                                }
                            });
                        },
                        0,
                        KEEP_ALIVE_EVERY.toMillis(),
                        TimeUnit.MILLISECONDS);
                frozen.pause();
                try {
                    Thread.sleep(FROZEN.toMillis());
                } finally {
                    frozen.resume();
                }
                long thawed = System.nanoTime();
                while (System.nanoTime() - thawed < WATCHED_AFTER_THAW.toNanos()) {
                    long asked = System.nanoTime();
                    long ttl = client.getLeaseClient()
                            .timeToLive(lease, LeaseOption.DEFAULT)
                            .get(10, TimeUnit.SECONDS)
                            .getTTL();
                    if (ttl < 0) {
                        long sinceAnswered = asked - lastAnsweredSentAt.get(); // read once: verdict and message
                        String timings = "gone " + millis(asked - thawed) + " ms after the thaw, the last answered"
                                + " keep-alive sent " + millis(sinceAnswered) + " ms before"
                                + " (member " + leader + " was the leader)";
                        return sinceAnswered < TimeUnit.SECONDS.toNanos(TTL_SECONDS)
                                ? "REVOKED " + timings
                                : "EXPIRED (keep-alives went unanswered) " + timings;
                    }
                    Thread.sleep(100);
                }
            } finally {
                timer.shutdownNow(); // before the client closes: no keep-alive sent on a closed client
            }
            client.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            return "lived on after the thaw of member " + leader;
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
