package io.distlock.testing;

import io.distlock.RemoteLockerBuilder;
import io.distlock.kit.ClientPartition;
import io.distlock.kit.NodeFaults;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The conformance kit's fault hooks ({@link NodeFaults}, {@link ClientPartition}) over the nodes of a store fixture,
 * so that every backend's test offers the same faults the same way:
 *
 * <pre>{@code
 * public Optional<NodeFaults> nodeFaults() {
 *     return Optional.of(KitFaults.nodes(ETCD.nodes(), 2, ETCD::resetFaults));
 * }
 * }</pre>
 */
public final class KitFaults {

    private KitFaults() {}

    /**
     * Node faults on {@code nodes}: kill with {@link ServerNode#kill9()}, pause and resume, and {@code restoreAll}
     * (the fixture's {@code resetFaults}) to bring all back.
     *
     * @param quorum the fewest nodes the store needs to grant and renew a lock
     */
    public static NodeFaults nodes(List<ServerNode> nodes, int quorum, Runnable restoreAll) {
        return nodes(nodes, quorum, node -> {}, restoreAll);
    }

    /**
     * {@link #nodes(List, int, Runnable)}, running {@code beforeKill} with the node's index before each kill (a store
     * that must learn something from a node before it dies: a Redis master without persistence tells how long it
     * has to stay down).
     */
    public static NodeFaults nodes(List<ServerNode> nodes, int quorum, IntConsumer beforeKill, Runnable restoreAll) {
        return nodes(nodes, quorum, beforeKill, Duration.ZERO, restoreAll);
    }

    /**
     * {@link #nodes(List, int, Runnable)} of a store whose surviving nodes may hold requests for up to {@code
     * stallAfterKill} after a node died ({@link NodeFaults#stallAfterKill()}).
     *
     * @throws IllegalArgumentException if {@code stallAfterKill} is negative, or {@code quorum} is not 1 to the nodes
     */
    public static NodeFaults nodes(List<ServerNode> nodes, int quorum, Duration stallAfterKill, Runnable restoreAll) {
        return nodes(nodes, quorum, node -> {}, stallAfterKill, restoreAll);
    }

    private static NodeFaults nodes(
            List<ServerNode> nodes, int quorum, IntConsumer beforeKill, Duration stallAfterKill, Runnable restoreAll) {
        Objects.requireNonNull(beforeKill, "beforeKill");
        Objects.requireNonNull(stallAfterKill, "stallAfterKill");
        if (stallAfterKill.isNegative()) {
            throw new IllegalArgumentException("stallAfterKill " + stallAfterKill + " is negative");
        }
        List<ServerNode> all = List.copyOf(nodes);
        if (quorum < 1 || quorum > all.size()) {
            throw new IllegalArgumentException("quorum " + quorum + " of " + all.size() + " nodes");
        }
        Objects.requireNonNull(restoreAll, "restoreAll");
        return new NodeFaults() {
            @Override
            public int nodeCount() {
                return all.size();
            }

            @Override
            public int quorum() {
                return quorum;
            }

            @Override
            public Duration stallAfterKill() {
                return stallAfterKill;
            }

            @Override
            public void kill(int node) {
                beforeKill.accept(node);
                all.get(node).kill9();
            }

            @Override
            public boolean canPause() {
                return all.stream().allMatch(n -> n.source() == ServerSource.LOCAL_BINARY);
            }

            @Override
            public void pause(int node) {
                all.get(node).pause();
            }

            @Override
            public void resume(int node) {
                all.get(node).resume();
            }

            @Override
            public void restoreAll() {
                restoreAll.run();
            }

            @Override
            public String toString() {
                return all.size() + " nodes, quorum " + quorum;
            }
        };
    }

    /** A majority of {@code nodes}: the quorum of a ZooKeeper ensemble, an etcd cluster or Redlock's masters. */
    public static int majority(List<ServerNode> nodes) {
        return nodes.size() / 2 + 1;
    }

    /**
     * A client partition through the proxies of {@code nodes}: {@code proxiedBuilder} must give lockers that reach
     * the store through {@link ServerNode#proxiedEndpoint()} only.
     */
    public static ClientPartition partition(List<ServerNode> nodes, Supplier<RemoteLockerBuilder> proxiedBuilder) {
        List<ServerNode> all = List.copyOf(nodes);
        Objects.requireNonNull(proxiedBuilder, "proxiedBuilder");
        return new ClientPartition() {
            @Override
            public RemoteLockerBuilder lockerBuilder() {
                return proxiedBuilder.get();
            }

            @Override
            public void partition() {
                all.forEach(ServerNode::partition);
            }

            @Override
            public void heal() {
                all.forEach(ServerNode::heal);
            }
        };
    }
}
