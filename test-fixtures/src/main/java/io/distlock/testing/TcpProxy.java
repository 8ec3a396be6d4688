package io.distlock.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loopback TCP proxy in front of one server, to cut a client off from it without touching the server: clients
 * connect to {@link #port()}, the proxy forwards to the target. Modes:
 *
 * <ul>
 *   <li>{@link Mode#PASS}: bytes flow both ways (the start mode; {@link #heal()} returns to it).
 *   <li>{@link Mode#DROP}: every open connection is closed and new ones are accepted and closed at once, like a
 *       crashed server or a firewall that rejects: clients see resets and end-of-stream quickly.
 *   <li>{@link Mode#BLACKHOLE}: connections are accepted and kept, but nothing is forwarded in either direction, like a
 *       network partition that drops packets: clients time out. Bytes sent meanwhile are held (as TCP would
 *       retransmit them) and delivered on {@link #heal()}; connections accepted meanwhile reach the server then.
 *   <li>{@link Mode#HOLD_REPLIES}: requests reach the server, its replies are held (delivered on {@link #heal()},
 *       discarded by {@link #drop()}): to lose the reply of a request the server has applied, set this mode, send,
 *       wait until the effect is visible to another client, then {@link #drop()}.
 * </ul>
 *
 * <p>Blocking sockets, two daemon threads per connection; meant for tests, not for throughput. Thread-safe. Stop it
 * with {@link #close()}.
 */
public final class TcpProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TcpProxy.class);
    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;
    private static final int BUFFER_SIZE = 16 * 1024;

    /** What the proxy does with traffic; see {@link TcpProxy}. */
    public enum Mode {
        /** Forward both ways. */
        PASS,
        /** Close open connections; accept and close new ones. */
        DROP,
        /** Accept and hold connections, forward nothing; clients time out. */
        BLACKHOLE,
        /** Forward client to server; hold server to client (the replies). */
        HOLD_REPLIES
    }

    private final String name;
    private volatile InetSocketAddress target;
    private final ServerSocket listener;
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionCounter = new AtomicInteger();
    private final Object gate = new Object();
    private volatile Mode mode = Mode.PASS;
    private volatile boolean closed;

    private TcpProxy(String name, InetSocketAddress target, ServerSocket listener) {
        this.name = name;
        this.target = target;
        this.listener = listener;
    }

    /**
     * Starts a proxy on a free loopback port forwarding to {@code target}, in {@link Mode#PASS}. Returns once it
     * accepts connections; the target need not be up yet (connections made while it is down are closed).
     *
     * @param name used in logs and thread names, e.g. {@code "etcd-2"}
     * @throws UncheckedIOException if no listening socket can be opened
     */
    public static TcpProxy start(String name, InetSocketAddress target) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(target, "target");
        ServerSocket listener;
        try {
            listener = new ServerSocket();
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot open a listening socket for proxy " + name, e);
        }
        TcpProxy proxy = new TcpProxy(name, target, listener);
        daemon(proxy::acceptLoop, "distlock-proxy-" + name + "-accept").start();
        LOG.debug("Proxy {} on port {} -> {}", name, proxy.port(), target);
        return proxy;
    }

    /** Starts a proxy forwarding to {@code 127.0.0.1:targetPort}; see {@link #start(String, InetSocketAddress)}. */
    public static TcpProxy start(String name, int targetPort) {
        return start(name, new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
    }

    /**
     * Starts a proxy listening on {@code listenAddress} (port 0 = any free port) forwarding to {@code target}, in
     * {@link Mode#PASS}; otherwise as {@link #start(String, InetSocketAddress)}. Lets a fixture put the proxy on the
     * address a server advertises (e.g. another loopback alias with the server's own port), so clients that discover
     * servers from the servers themselves still go through the proxy.
     *
     * @throws UncheckedIOException if {@code listenAddress} cannot be bound
     */
    public static TcpProxy start(String name, InetSocketAddress listenAddress, InetSocketAddress target) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(listenAddress, "listenAddress");
        Objects.requireNonNull(target, "target");
        ServerSocket listener;
        try {
            listener = new ServerSocket();
            listener.setReuseAddress(true);
            listener.bind(listenAddress, 128);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot listen on " + listenAddress + " for proxy " + name, e);
        }
        TcpProxy proxy = new TcpProxy(name, target, listener);
        daemon(proxy::acceptLoop, "distlock-proxy-" + name + "-accept").start();
        LOG.debug("Proxy {} on {} -> {}", name, proxy.endpoint(), target);
        return proxy;
    }

    /** The address and port clients connect to. */
    public InetSocketAddress listenAddress() {
        return new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
    }

    /** The loopback port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** {@code host:port} of the proxy ({@code 127.0.0.1:port} unless started on another address), for clients. */
    public String endpoint() {
        return listener.getInetAddress().getHostAddress() + ":" + port();
    }

    /** The address the proxy forwards to. */
    public InetSocketAddress target() {
        return target;
    }

    /**
     * Forwards the connections made from now on to {@code newTarget}; those open stay with the old target. What a
     * client meets when the name it connects to moves to another server (a managed store's failover to a replica).
     */
    public void retarget(InetSocketAddress newTarget) {
        this.target = Objects.requireNonNull(newTarget, "newTarget");
        LOG.debug("Proxy {} now forwards new connections to {}", name, newTarget);
    }

    /** The current mode. */
    public Mode mode() {
        return mode;
    }

    /** Sets the mode; see {@link Mode}. Switching to {@link Mode#DROP} closes every open connection before returning. */
    public void setMode(Mode newMode) {
        Objects.requireNonNull(newMode, "mode");
        synchronized (gate) {
            mode = newMode;
            gate.notifyAll();
        }
        LOG.debug("Proxy {} -> {}", name, newMode);
        if (newMode == Mode.DROP) {
            closeAllConnections();
        }
    }

    /** Same as {@code setMode(Mode.DROP)}. */
    public void drop() {
        setMode(Mode.DROP);
    }

    /** Same as {@code setMode(Mode.BLACKHOLE)}. */
    public void blackhole() {
        setMode(Mode.BLACKHOLE);
    }

    /** Same as {@code setMode(Mode.PASS)}: forwarding resumes, held bytes and connections go through. */
    public void heal() {
        setMode(Mode.PASS);
    }

    /** The number of client connections currently open through the proxy (held ones included). */
    public int openConnections() {
        return connections.size();
    }

    /** Stops listening and closes every connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        synchronized (gate) {
            gate.notifyAll();
        }
        closeQuietly(listener);
        closeAllConnections();
    }

    @Override
    public String toString() {
        return "TcpProxy[" + name + ", " + endpoint() + " -> " + target + ", " + mode + "]";
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warn("Proxy {} stopped accepting: {}", name, e.toString());
                }
                return;
            }
            if (mode == Mode.DROP) {
                closeQuietly(client);
                continue;
            }
            Connection c = new Connection(client, connectionCounter.incrementAndGet());
            connections.add(c);
            daemon(c::open, "distlock-proxy-" + name + "-" + c.id + "-open").start();
        }
    }

    /**
     * Blocks while traffic in this direction is held ({@link Mode#BLACKHOLE}, or {@link Mode#HOLD_REPLIES} for
     * replies). Returns whether traffic may go on ({@code false} once the mode is {@link Mode#DROP} or the proxy is
     * closed).
     */
    private boolean awaitPassable(boolean toServer) throws InterruptedException {
        synchronized (gate) {
            while ((mode == Mode.BLACKHOLE || (mode == Mode.HOLD_REPLIES && !toServer)) && !closed) {
                gate.wait();
            }
            return (mode == Mode.PASS || mode == Mode.HOLD_REPLIES) && !closed;
        }
    }

    private void closeAllConnections() {
        for (Connection c : new ArrayList<>(connections)) {
            c.close();
        }
    }

    private static Thread daemon(Runnable r, String threadName) {
        Thread t = new Thread(r, threadName);
        t.setDaemon(true);
        return t;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // closing on a fault path; nothing more to do
        }
    }

    /** One client connection and, once in PASS mode, its upstream connection. */
    private final class Connection {
        private final Socket client;
        private final int id;
        private volatile Socket upstream;
        private final AtomicInteger finishedPumps = new AtomicInteger();

        Connection(Socket client, int id) {
            this.client = client;
            this.id = id;
        }

        void open() {
            try {
                if (!awaitPassable(true)) {
                    close();
                    return;
                }
                Socket up = new Socket();
                up.connect(target, CONNECT_TIMEOUT_MILLIS);
                up.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
                upstream = up;
                if (closed || mode == Mode.DROP) {
                    close();
                    return;
                }
                daemon(() -> pump(client, up, true), "distlock-proxy-" + name + "-" + id + "-up")
                        .start();
                daemon(() -> pump(up, client, false), "distlock-proxy-" + name + "-" + id + "-down")
                        .start();
            } catch (IOException e) {
                LOG.debug("Proxy {} cannot reach {}: {}", name, target, e.toString());
                close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
            }
        }

        private void pump(Socket from, Socket to, boolean toServer) {
            byte[] buffer = new byte[BUFFER_SIZE];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                while (true) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        break;
                    }
                    if (!awaitPassable(toServer)) {
                        close();
                        return;
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
                // Half-close: pass the end-of-stream on, let the other direction finish.
                if (finishedPumps.incrementAndGet() == 2) {
                    close();
                } else {
                    to.shutdownOutput();
                }
            } catch (SocketException e) {
                close();
            } catch (IOException e) {
                LOG.debug("Proxy {} connection {}: {}", name, id, e.toString());
                close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                close();
            }
        }

        void close() {
            connections.remove(this);
            closeQuietly(client);
            closeQuietly(upstream);
        }
    }
}
