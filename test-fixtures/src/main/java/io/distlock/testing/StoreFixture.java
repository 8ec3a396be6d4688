package io.distlock.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every store fixture shares: start before the test class, undo faults after each test, stop everything after
 * the class (or on {@link #close()} when used without JUnit). Subclasses start their nodes in {@link #startNodes}.
 */
abstract class StoreFixture implements BeforeAllCallback, AfterEachCallback, AfterAllCallback, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(StoreFixture.class);

    private final List<ServerNode> nodes = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private boolean started;

    /** Starts the nodes; called once by {@link #start()}. Register each with {@link #addNode} and {@link #track}. */
    abstract void startNodes();

    /** A short description for messages, e.g. "5 Redis servers". */
    abstract String describe();

    /** Adds a node (in order: {@code node(0)} is the first added). */
    final synchronized void addNode(ServerNode node) {
        nodes.add(node);
    }

    /**
     * Adds a server given by {@code variable} (the fixture does not run it), behind a proxy of its own: only the proxy
     * takes faults, process faults throw and say so.
     *
     * @param server what the node is, for the message: "server", "member"
     */
    final void addExternalNode(String name, String endpoint, String server, String variable) {
        addUnmanagedNode(
                name,
                endpoint,
                ServerSource.ENVIRONMENT,
                "the " + server + " is given by " + variable
                        + " and not run by the fixture; unset the variable to let the fixture run its own");
    }

    /**
     * Adds a server the fixture does not run as a process (from the environment, a container), behind a proxy of its
     * own: only the proxy takes faults, process faults throw with {@code why}.
     */
    final void addUnmanagedNode(String name, String endpoint, ServerSource source, String why) {
        TcpProxy proxy = track(TcpProxy.start(name, Endpoints.address(endpoint)));
        addNode(new UnmanagedNode(name, endpoint, source, why, proxy));
    }

    /** Registers something to close on {@link #close()}, in reverse order of registration. */
    final synchronized <T extends AutoCloseable> T track(T resource) {
        resources.add(resource);
        return resource;
    }

    /**
     * Starts the servers unless already started; blocks until every one is ready. On failure everything started so
     * far is stopped.
     *
     * @throws IllegalStateException if no server is available (the message says how to install one) or a server is
     *     not ready in time
     */
    public final synchronized void start() {
        if (started) {
            return;
        }
        try {
            startNodes();
            started = true;
            LOG.info("Started {}: {}", describe(), nodes);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * The nodes, in order.
     *
     * @throws IllegalStateException if the fixture is not started
     */
    public synchronized List<ServerNode> nodes() {
        requireStarted();
        return Collections.unmodifiableList(new ArrayList<>(nodes));
    }

    /**
     * The node at {@code index} (0-based).
     *
     * @throws IllegalStateException if the fixture is not started
     * @throws IndexOutOfBoundsException if there is no such node
     */
    public synchronized ServerNode node(int index) {
        requireStarted();
        return nodes.get(index);
    }

    /**
     * Where the servers come from.
     *
     * @throws IllegalStateException if the fixture is not started
     */
    public synchronized ServerSource source() {
        requireStarted();
        return nodes.get(0).source();
    }

    /**
     * Undoes every fault: heals all proxies, resumes paused nodes, restarts stopped or killed ones (all launched
     * before any is awaited, so a cluster that lost its quorum comes back). Blocks until all are ready. Called after
     * each test.
     */
    public final synchronized void resetFaults() {
        if (started) {
            undoFaults();
        }
    }

    /**
     * {@link #resetFaults()} of a started fixture: heals, resumes and brings back every node. A fixture with faults
     * beyond its nodes' or a readiness of the whole cluster extends it.
     */
    void undoFaults() {
        List<ManagedNode> down = new ArrayList<>();
        for (ServerNode node : nodes) {
            node.heal();
            if (node instanceof ManagedNode) {
                ManagedNode managed = (ManagedNode) node;
                if (managed.isPaused()) {
                    managed.resume();
                }
                if (!managed.isRunning()) {
                    managed.launch();
                    down.add(managed);
                }
            }
        }
        for (ManagedNode node : down) {
            node.awaitReady();
        }
    }

    /** Stops every server and proxy this fixture started. Idempotent; the fixture can be started again. */
    @Override
    public final synchronized void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                LOG.warn("Cannot close {}: {}", resources.get(i), e.toString());
            }
        }
        resources.clear();
        nodes.clear();
        started = false;
    }

    /** Starts the fixture before the test class. */
    @Override
    public void beforeAll(ExtensionContext context) {
        start();
    }

    /** Undoes the faults the test injected, see {@link #resetFaults()}. */
    @Override
    public void afterEach(ExtensionContext context) {
        resetFaults();
    }

    /** Stops the fixture after the test class. */
    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    /** Whether {@link #start()} has completed and {@link #close()} has not been called since. */
    final synchronized boolean isStarted() {
        return started;
    }

    final void requireStarted() {
        if (!started) {
            throw notStarted();
        }
    }

    /** The failure of a call that needs the fixture started, saying how to start it. */
    final IllegalStateException notStarted() {
        return new IllegalStateException(describe() + " not started: register the fixture with"
                + " @RegisterExtension on a static field, or call start()");
    }
}
