package io.distlock.testing;

/**
 * One node of a store fixture (a Redis server, an etcd member, a ZooKeeper server) and the faults a test can inject
 * into it. Clients reach the node {@linkplain #endpoint() directly} or through its {@linkplain #proxy() proxy}; only
 * clients pointed at the proxy see {@linkplain #partition() partitions}.
 *
 * <p>Process faults ({@link #stop}, {@link #kill9}, {@link #restart}, {@link #pause}, {@link #resume}) need a server
 * the fixture runs itself; on a server given by an environment variable or running in a container they throw {@link
 * UnsupportedOperationException} saying so. Proxy faults work on every node. Fixtures undo all faults after each test
 * (heal, resume, restart), so each test starts with every node up and reachable.
 */
public interface ServerNode {

    /** The node's name, e.g. {@code redis-2} or {@code etcd-1}, as used in logs and file names. */
    String name();

    /** {@code host:port} where clients reach the node directly. */
    String endpoint();

    /** {@code host:port} of the node's {@link #proxy() proxy}: point clients here to be able to partition them. */
    default String proxiedEndpoint() {
        return proxy().endpoint();
    }

    /** The loopback proxy in front of the node's client port. */
    TcpProxy proxy();

    /**
     * Where the server comes from: every fault is available for {@link ServerSource#LOCAL_BINARY}, all but pause and
     * resume for {@link ServerSource#IN_PROCESS}, only proxy faults otherwise.
     */
    ServerSource source();

    /** Whether the node is up (not stopped or killed; a paused node is up). */
    boolean isRunning();

    /**
     * Stops the node gracefully (SIGTERM, then SIGKILL after a grace period) and blocks until it is down.
     *
     * @throws UnsupportedOperationException if the fixture does not run this server itself
     */
    void stop();

    /**
     * Kills the node abruptly (SIGKILL) and blocks until it is down.
     *
     * @throws UnsupportedOperationException if the fixture does not run this server itself
     */
    void kill9();

    /**
     * Starts the node again, after stopping it if it runs, with the same ports and data, and blocks until it is ready.
     * A member of a cluster that has lost its quorum cannot be ready alone: bring several back at once with the
     * fixture's {@code resetFaults()}.
     *
     * @throws UnsupportedOperationException if the fixture does not run this server itself
     * @throws IllegalStateException if it is not ready in time
     */
    void restart();

    /**
     * Freezes the node (SIGSTOP): connections stay open, nothing is answered, peers see it as silent.
     *
     * @throws UnsupportedOperationException if the fixture does not run this server as a process of its own
     */
    void pause();

    /**
     * Thaws a node frozen by {@link #pause()}.
     *
     * @throws UnsupportedOperationException if the fixture does not run this server as a process of its own
     */
    void resume();

    /** Blackholes the proxy: clients using {@link #proxiedEndpoint()} hang and time out. See {@link TcpProxy}. */
    default void partition() {
        proxy().blackhole();
    }

    /** Drops the proxy's connections and refuses new ones: clients using the proxy fail fast. */
    default void disconnect() {
        proxy().drop();
    }

    /** Returns the proxy to pass-through after {@link #partition()} or {@link #disconnect()}. */
    default void heal() {
        proxy().heal();
    }
}
