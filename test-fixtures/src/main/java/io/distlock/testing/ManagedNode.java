package io.distlock.testing;

/**
 * A node whose server the fixture runs itself, so it can bring it back: {@link StoreFixture#resetFaults()} launches
 * every node that is down before awaiting any, since members of a cluster that lost its quorum only become ready
 * together.
 */
interface ManagedNode extends ServerNode {

    /** Whether the node is frozen by {@link #pause()}. */
    boolean isPaused();

    /** Starts the stopped or killed server again, without waiting for it to be ready. */
    void launch();

    /** Blocks until the node is ready to serve clients. */
    void awaitReady();
}
