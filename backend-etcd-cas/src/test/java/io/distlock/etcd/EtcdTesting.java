package io.distlock.etcd;

import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.ServerNode;
import java.time.Duration;
import java.util.stream.Collectors;

/** What the etcd tests share: URIs for a fixture, and how long etcd takes to free a dead client's locks. */
final class EtcdTesting {

    private EtcdTesting() {}

    /** A key unique to this call, starting with {@code name}. */
    static String unique(String name) {
        return name + "-" + java.util.UUID.randomUUID().toString().substring(0, 12);
    }

    /** {@code etcd://<every member's client endpoint>/<prefix>}. */
    static String uri(EtcdCluster etcd, String prefix) {
        return "etcd://" + etcd.nodes().stream().map(ServerNode::endpoint).collect(Collectors.joining(",")) + prefix;
    }

    /** The same through every member's proxy, for tests that cut the client off. */
    static String proxiedUri(EtcdCluster etcd, String prefix) {
        return "etcd://"
                + etcd.nodes().stream().map(ServerNode::proxiedEndpoint).collect(Collectors.joining(",")) + prefix;
    }

    /**
     * How long after its holder died etcd frees a lock: the lease TTL (whole seconds, at least etcd's minimum of about
     * 1.5 election timeouts, 1s with the fixture's settings) after the last keep-alive.
     */
    static Duration sessionTimeout(Duration leaseTime) {
        long seconds = EtcdLockBackendProvider.ttlSeconds(leaseTime);
        return Duration.ofSeconds(seconds).plus(TestTimeouts.scaled(Duration.ofSeconds(1)));
    }
}
