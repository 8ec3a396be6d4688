package io.distlock.kit;

import java.time.Duration;

/**
 * Faults the kit injects into single nodes of a store of several (a ZooKeeper ensemble, an etcd cluster, Redlock's
 * masters, a Cassandra cluster), given by a backend's test through {@link StoreFaults#nodeFaults()}. Nodes are numbered
 * from 0 to {@link #nodeCount()} - 1. The fixture undoes every fault after each test; {@link #restoreAll()} undoes them
 * within a test.
 */
public interface NodeFaults {

    /** How many nodes the lockers of the fixture use. */
    int nodeCount();

    /**
     * The fewest nodes that must be up for the store to grant and renew a lock: a majority of a ZooKeeper ensemble or
     * an etcd cluster, Redlock's quorum of masters, the replicas a Cassandra {@code QUORUM} needs. Killing {@code
     * nodeCount() - quorum()} nodes leaves a working store; killing one more does not.
     */
    int quorum();

    /**
     * How much longer than {@link LockerFixture#maxWait()} a grant may take in the minority-killed run because the
     * surviving nodes hold requests after a node died, until they notice it is gone. A Cassandra coordinator that
     * picked the dead replica for a {@code QUORUM} read waits for it until the server's read timeout, and the next read
     * may do the same until the failure detector convicts the node (seconds, tens of seconds on a loaded machine).
     * Zero, the default, for stores whose clients move on at once: a ZooKeeper or etcd client to another member, a
     * Redlock grant that needs no answer from the dead master.
     */
    default Duration stallAfterKill() {
        return Duration.ZERO;
    }

    /** Kills node {@code node} abruptly ({@code SIGKILL}) and blocks until it is down. */
    void kill(int node);

    /**
     * Whether {@link #pause(int)} works: a server the fixture runs inside the test's JVM cannot be frozen alone. The
     * randomized run leaves pauses out where it cannot.
     */
    default boolean canPause() {
        return true;
    }

    /** Freezes node {@code node} ({@code SIGSTOP}): its connections stay open and nothing is answered. */
    void pause(int node);

    /** Thaws a node frozen by {@link #pause(int)}. */
    void resume(int node);

    /**
     * Brings every node back: killed ones restarted with their data, paused ones resumed; blocks until the store
     * serves again.
     */
    void restoreAll();
}
