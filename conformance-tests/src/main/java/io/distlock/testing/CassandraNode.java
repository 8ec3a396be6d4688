package io.distlock.testing;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One forked Cassandra node and the {@link TcpProxy} in front of its native port. The node serves CQL on
 * {@link #nativeAddress()} and advertises {@link #clientAddress()}, where the proxy listens; clients are given the
 * latter.
 */
final class CassandraNode implements AutoCloseable {

    /** A node's first start includes creating its system keyspaces; seconds here, more on a loaded machine. */
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

    private final CassandraNodeConfig config;
    private final ServerProcess process;
    private final TcpProxy proxy;

    CassandraNode(CassandraNodeConfig config, Path java, String classpath) {
        this.config = config;
        config.writeFiles();
        this.process = ServerProcess.builder(config.name(), config.command(java, classpath))
                .logFile(config.logFile())
                .workingDirectory(config.directory())
                .readiness(
                        () -> CassandraSessions.answers(config.nativeAddress(), CassandraSessions.DEFAULT_DATACENTER),
                        READY_TIMEOUT)
                .stopGrace(Duration.ofSeconds(20))
                .build();
        this.proxy = TcpProxy.start(config.name() + "-proxy", config.clientAddress(), config.nativeAddress());
    }

    String name() {
        return config.name();
    }

    /** Where the node serves CQL directly. */
    InetSocketAddress nativeAddress() {
        return config.nativeAddress();
    }

    /** Where clients reach the node: its proxy, and the address the node advertises. */
    InetSocketAddress clientAddress() {
        return config.clientAddress();
    }

    TcpProxy proxy() {
        return proxy;
    }

    ServerProcess process() {
        return process;
    }

    /** Whether the process runs and is not paused. */
    boolean isServing() {
        return process.isRunning() && !process.isPaused();
    }

    /** Stops the node and closes its proxy. */
    @Override
    public void close() {
        try {
            process.stop();
        } finally {
            proxy.close();
        }
    }

    @Override
    public String toString() {
        return name() + "[" + nativeAddress() + ", clients via " + clientAddress() + "]";
    }
}
