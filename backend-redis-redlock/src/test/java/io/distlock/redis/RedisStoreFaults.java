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

/**
 * The kit's store faults on the fixture's masters: all of them stopped and started, a lock's key deleted on all,
 * single masters killed or frozen (Redlock's quorum, a majority of the masters, still grants), and lockers cut off
 * through the masters' proxies.
 */
final class RedisStoreFaults implements StoreFaults {

    /** One renewal's round trip on a loaded machine, before the kit's scaling. */
    private static final Duration ONE_REQUEST = Duration.ofMillis(500);

    private final RedisServers redis;
    private final RedisProbe probe;
    private final Duration leaseTime;

    /**
     * @param leaseTime the longest lease the kit opens lockers with (the fixture's {@code leaseTime()})
     */
    RedisStoreFaults(RedisServers redis, RedisProbe probe, Duration leaseTime) {
        this.redis = redis;
        this.probe = probe;
        this.leaseTime = leaseTime;
    }

    @Override
    public void stopStore() {
        redis.nodes().forEach(ServerNode::stop);
    }

    @Override
    public void startStore() {
        for (ServerNode node : redis.nodes()) {
            if (!node.isRunning()) {
                node.restart();
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
        return Optional.of(KitFaults.nodes(masters, KitFaults.majority(masters), redis::resetFaults));
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
