package io.distlock.testing;

import org.apache.curator.test.InstanceSpec;

/**
 * A ZooKeeper server inside the test JVM (Curator's testing servers): stop, kill and restart work; pause and resume
 * do not, since one JVM cannot freeze a part of itself.
 */
final class ZooKeeperNode implements ManagedNode {

    /** The in-process server operations; Curator's TestingServer and TestingCluster differ in how they offer them. */
    interface Control {
        void stop() throws Exception;

        void kill() throws Exception;

        void restart() throws Exception;
    }

    private final String name;
    private final InstanceSpec spec;
    private final Control control;
    private final Runnable awaitServing;
    private final TcpProxy proxy;
    private volatile boolean running = true;

    ZooKeeperNode(String name, InstanceSpec spec, Control control, Runnable awaitServing, TcpProxy proxy) {
        this.name = name;
        this.spec = spec;
        this.control = control;
        this.awaitServing = awaitServing;
        this.proxy = proxy;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String endpoint() {
        return Endpoints.loopback(spec.getPort());
    }

    @Override
    public TcpProxy proxy() {
        return proxy;
    }

    @Override
    public ServerSource source() {
        return ServerSource.IN_PROCESS;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Shuts the server down cleanly (in-process: closes its client connections and its quorum peer). */
    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        run("stop", control::stop);
        running = false;
    }

    /**
     * Kills the server without a clean shutdown, as close to SIGKILL as one JVM allows ({@code
     * TestingZooKeeperServer.kill()}); a single {@code TestingServer} has no kill, so it is stopped.
     */
    @Override
    public synchronized void kill9() {
        requireRunning("kill9");
        run("kill", control::kill);
        running = false;
    }

    @Override
    public void restart() {
        launch();
        awaitReady();
    }

    @Override
    public synchronized void launch() {
        run("restart", control::restart);
        running = true;
    }

    @Override
    public void awaitReady() {
        awaitServing.run();
    }

    @Override
    public boolean isPaused() {
        return false;
    }

    @Override
    public void pause() {
        throw new UnsupportedOperationException("pause() on " + name + " is unavailable: ZooKeeper servers run"
                + " inside the test JVM, which cannot freeze one of them. Use partition() to cut clients off (traffic"
                + " between servers is not proxied), or stop()/kill9() and restart().");
    }

    @Override
    public void resume() {
        throw new UnsupportedOperationException("resume() on " + name + " is unavailable: in-process ZooKeeper"
                + " servers cannot be paused; see pause().");
    }

    private void requireRunning(String what) {
        if (!running) {
            throw new IllegalStateException(what + "() on " + name + ": the server is not running");
        }
    }

    private interface Action {
        void run() throws Exception;
    }

    private void run(String what, Action action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted during " + what + " of " + name, e);
        } catch (Exception e) {
            throw new IllegalStateException("Cannot " + what + " " + name + ": " + e, e);
        }
    }

    @Override
    public String toString() {
        return name + "@" + endpoint() + " (in-process, proxy " + proxy.endpoint() + ")";
    }
}
