package io.distlock.testing;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One forked Cassandra node and the {@link TcpProxy} in front of its native port. The node serves CQL on
 * {@link #nativeAddress()} and advertises {@link #clientAddress()}, where the proxy listens; clients are given the
 * latter. Every fault of {@link ServerNode} is available; {@link #restart()} also waits, when every node runs, until the
 * cluster sees the node up again.
 */
final class CassandraNode implements ManagedNode {

    /** A node's first start includes creating its system keyspaces; seconds here, more on a loaded machine. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

    private final CassandraNodeConfig config;
    private final ServerProcess process;
    private final ServerProcess.ReadinessProbe answersCql;
    private final TcpProxy proxy;
    private volatile ForkedCassandra cluster;
    private final boolean skewableClock;

    CassandraNode(CassandraNodeConfig config, Path java, String classpath, boolean skewableClock) {
        this.config = config;
        this.skewableClock = skewableClock;
        config.writeFiles();
        this.process = ServerProcess.builder(config.name(), config.command(java, classpath, skewableClock))
                .logFile(config.logFile())
                .workingDirectory(config.directory())
                .stopGrace(Duration.ofSeconds(20))
                .build();
        this.answersCql = () -> CassandraSessions.answers(
                config.nativeAddress(), CassandraSessions.DEFAULT_DATACENTER, config.security());
        this.proxy = TcpProxy.start(config.name() + "-proxy", config.clientAddress(), config.nativeAddress());
    }

    /**
     * Moves the node's wall clock {@code offset} away from the real one (see {@link CassandraServerClock}).
     *
     * @throws UnsupportedOperationException unless the cluster was built with skewable clocks
     */
    void setClockOffset(Duration offset) {
        if (!skewableClock) {
            throw new UnsupportedOperationException(
                    "Node " + config.name() + " runs the real clock: build the cluster withSkewableClocks()");
        }
        CassandraServerClock.setOffset(config.directory(), offset);
    }

    /** Whether the node runs the skewable clock. */
    boolean skewableClock() {
        return skewableClock;
    }

    /** Tells the node its cluster, for {@link #restart()}. */
    void attach(ForkedCassandra cluster) {
        this.cluster = cluster;
    }

    @Override
    public String name() {
        return config.name();
    }

    /** {@code host:port} where the node serves CQL directly (bypassing the proxy). */
    @Override
    public String endpoint() {
        return config.listenAddress() + ":" + config.nativePort();
    }

    /** Where the node serves CQL directly. */
    InetSocketAddress nativeAddress() {
        return config.nativeAddress();
    }

    /** Where clients reach the node: its proxy, and the address the node advertises. */
    InetSocketAddress clientAddress() {
        return config.clientAddress();
    }

    @Override
    public TcpProxy proxy() {
        return proxy;
    }

    /** A forked JVM is a local process: every fault is available. */
    @Override
    public ServerSource source() {
        return ServerSource.LOCAL_BINARY;
    }

    @Override
    public boolean isRunning() {
        return process.isRunning();
    }

    /** Whether the process runs and is not paused. */
    boolean isServing() {
        return process.isRunning() && !process.isPaused();
    }

    @Override
    public boolean isPaused() {
        return process.isPaused();
    }

    /** SIGTERM, SIGKILL after 20 s (scaled); blocks until the JVM has exited. */
    @Override
    public void stop() {
        process.stop();
    }

    @Override
    public void kill9() {
        process.kill9();
    }

    /**
     * Stops the node if it runs and starts it with the same ports and data; blocks until it answers CQL and, when every
     * node of the cluster is running, until every node sees every other up.
     */
    @Override
    public void restart() {
        process.restart();
        awaitReady();
        ForkedCassandra owner = cluster;
        if (owner != null) {
            owner.awaitHealthyIfAllServing();
        }
    }

    /** Starts the JVM (same ports and data) without waiting for it to answer CQL: the nodes of a cluster start together. */
    @Override
    public void launch() {
        process.start();
    }

    /** Blocks until the node answers CQL. */
    @Override
    public void awaitReady() {
        process.awaitReady(answersCql, READY_TIMEOUT);
    }

    @Override
    public void pause() {
        process.pause();
    }

    @Override
    public void resume() {
        process.resume();
    }

    ServerProcess process() {
        return process;
    }

    /**
     * Kills the node and closes its proxy: its data goes with the cluster, so there is nothing to drain, and a graceful
     * stop (SIGTERM: a flush, the gossip round announcing the shutdown) took about 5 s a node.
     */
    void close() {
        try {
            if (process.isRunning()) {
                process.kill9();
            }
        } finally {
            proxy.close();
        }
    }

    @Override
    public String toString() {
        return name() + "[" + nativeAddress() + ", clients via " + clientAddress() + "]";
    }
}
