package io.distlock.redis;

import io.distlock.RemoteLockers;
import io.distlock.kit.ClientPartition;
import io.distlock.kit.NodeFaults;
import io.distlock.kit.StoreFaults;
import io.distlock.testing.KitFaults;
import io.distlock.testing.RedisServers;
import io.distlock.testing.ServerNode;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kit's store faults on the fixture's masters: all of them stopped and started, a lock's key deleted on all,
 * single masters killed or frozen (Redlock's quorum, a majority of the masters, still grants), and lockers cut off
 * through the masters' proxies.
 *
 * <p>The fixture's masters keep nothing on disk, so a master restarted at once would come back without the keys it
 * held, which seed 002 rules out (and {@code RedlockPersistenceTest} shows giving a lock two holders). The kit restarts
 * a store "with its data"; here, as the seed's operational rule for masters without persistence says, a stopped or
 * killed master comes back only once every key it held when it went down has expired ("delayed restart"): what it
 * forgot, it no longer had to hold. How long that is, is read from the master as it goes down (see {@link
 * RedisProbe#holdWritesAndLongestTtl}), or is the longest lease when it cannot be read.
 */
final class RedisStoreFaults implements StoreFaults {

    private static final Logger log = LoggerFactory.getLogger(RedisStoreFaults.class);

    /** One renewal's round trip on a loaded machine, before the kit's scaling. */
    private static final Duration ONE_REQUEST = Duration.ofMillis(500);

    /** How long a master's writes are held between reading its keys' time to live and stopping it. */
    private static final Duration HOLD_WRITES = Duration.ofSeconds(10);

    /** A key expires up to a millisecond after its time to live (Redis counts whole milliseconds). */
    private static final Duration EXPIRY_GRANULARITY = Duration.ofMillis(5);

    private final RedisServers redis;
    private final RedisProbe probe;
    private final Duration leaseTime;

    /** Per master, the {@link System#nanoTime()} before which it may not come back. */
    private final long[] mayRejoinAt;

    /**
     * @param leaseTime the longest lease the kit opens lockers with (the fixture's {@code leaseTime()})
     */
    RedisStoreFaults(RedisServers redis, RedisProbe probe, Duration leaseTime) {
        this.redis = redis;
        this.probe = probe;
        this.leaseTime = leaseTime;
        this.mayRejoinAt = new long[redis.nodes().size()];
    }

    @Override
    public void stopStore() {
        for (int m = 0; m < redis.nodes().size(); m++) {
            if (redis.node(m).isRunning()) {
                goingDown(m);
                redis.node(m).stop();
            }
        }
    }

    /** Restarts each stopped master once the keys it held have expired. */
    @Override
    public void startStore() {
        for (int m = 0; m < redis.nodes().size(); m++) {
            if (!redis.node(m).isRunning()) {
                awaitRejoin(m);
                redis.node(m).restart();
            }
        }
    }

    /** Holds master {@code m}'s writes and notes when the keys it holds will all have expired. */
    private void goingDown(int m) {
        Duration longest;
        try {
            longest = probe.holdWritesAndLongestTtl(m, "distlock:", HOLD_WRITES);
        } catch (RuntimeException e) {
            log.warn(
                    "Cannot read the keys' time to live on master {} ({}); it stays down for a lease", m, e.toString());
            longest = leaseTime;
        }
        mayRejoinAt[m] = System.nanoTime() + longest.plus(EXPIRY_GRANULARITY).toNanos();
    }

    private void awaitRejoin(int m) {
        long left = mayRejoinAt[m] - System.nanoTime();
        if (left > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while master " + m + " waits out its keys' ttl", e);
            }
        }
    }

    /** {@code DEL <prefix><key>} on every master, as an operator would. */
    @Override
    public void deleteLockEntry(String key) {
        for (int m = 0; m < redis.nodes().size(); m++) {
            probe.delete(m, "distlock:" + key);
        }
    }

    /**
     * Nothing watches the key: the holder learns it at its next renewal (every third of the lease), when fewer than
     * a majority extend it. A third of the lease plus one request.
     */
    @Override
    public Duration deletionNoticedWithin() {
        return leaseTime.dividedBy(3).plus(ONE_REQUEST);
    }

    /**
     * The masters, quorum {@code N/2+1}. A single instance has no minority to lose: the kit skips the node-fault tests
     * there with that reason.
     */
    @Override
    public Optional<NodeFaults> nodeFaults() {
        List<ServerNode> masters = redis.nodes();
        // A master is killed once it has told how long it must stay down, and comes back only after that.
        return Optional.of(KitFaults.nodes(masters, KitFaults.majority(masters), this::goingDown, () -> {
            for (int m = 0; m < masters.size(); m++) {
                if (!masters.get(m).isRunning()) {
                    awaitRejoin(m);
                }
            }
            redis.resetFaults();
        }));
    }

    /** Lockers of the same scheme whose every master is reached through its proxy. */
    @Override
    public Optional<ClientPartition> clientPartition() {
        List<String> proxied = redis.proxiedEndpoints();
        String uri = (proxied.size() == 1 ? "redis://" : "redlock://") + String.join(",", proxied);
        return Optional.of(
                KitFaults.partition(redis.nodes(), () -> RemoteLockers.builder().uri(uri)));
    }
}
