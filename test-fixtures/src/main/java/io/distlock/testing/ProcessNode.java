package io.distlock.testing;

import java.time.Duration;

/** A node the fixture runs as a child process: every fault is available. */
final class ProcessNode implements ManagedNode {

    private final String endpoint;
    private final ServerProcess process;
    private final ServerProcess.ReadinessProbe probe;
    private final Duration readyTimeout;
    private final TcpProxy proxy;

    ProcessNode(
            String endpoint,
            ServerProcess process,
            ServerProcess.ReadinessProbe probe,
            Duration readyTimeout,
            TcpProxy proxy) {
        this.endpoint = endpoint;
        this.process = process;
        this.probe = probe;
        this.readyTimeout = readyTimeout;
        this.proxy = proxy;
    }

    /** The process, for fixtures that need its log or pid. */
    ServerProcess process() {
        return process;
    }

    /** Starts the process without waiting for readiness (members of a cluster need each other to be ready). */
    @Override
    public void launch() {
        process.start();
    }

    /** Blocks until the node answers its readiness probe. */
    @Override
    public void awaitReady() {
        process.awaitReady(probe, readyTimeout);
    }

    @Override
    public boolean isPaused() {
        return process.isPaused();
    }

    @Override
    public String name() {
        return process.name();
    }

    @Override
    public String endpoint() {
        return endpoint;
    }

    @Override
    public TcpProxy proxy() {
        return proxy;
    }

    @Override
    public ServerSource source() {
        return ServerSource.LOCAL_BINARY;
    }

    @Override
    public boolean isRunning() {
        return process.isRunning();
    }

    @Override
    public void stop() {
        process.stop();
    }

    @Override
    public void kill9() {
        process.kill9();
    }

    @Override
    public void restart() {
        process.restart();
        awaitReady();
    }

    @Override
    public void pause() {
        process.pause();
    }

    @Override
    public void resume() {
        process.resume();
    }

    @Override
    public String toString() {
        return name() + "@" + endpoint + " (proxy " + proxy.endpoint() + ")";
    }
}
