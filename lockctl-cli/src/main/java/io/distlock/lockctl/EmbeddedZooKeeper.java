package io.distlock.lockctl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * The default store of {@code bench}, {@code run} and {@code demo}, and the server of {@code store}: a ZooKeeper server
 * inside the lockctl process, on a loopback port, its data in a temporary directory removed on close. Nothing to install
 * but Java.
 */
final class EmbeddedZooKeeper implements AutoCloseable {

    private final ZooKeeperServerEmbedded server;
    private final Path dir;
    private final int port;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, Path dir, int port) {
        this.server = server;
        this.dir = dir;
        this.port = port;
    }

    /** Starts a server on a free port and waits until it serves. */
    static EmbeddedZooKeeper start() throws Exception {
        return start(0);
    }

    /** Starts a server on {@code port} of 127.0.0.1, 0 for a free one, and waits until it serves. */
    static EmbeddedZooKeeper start(int port) throws Exception {
        return start0(port == 0 ? freePort() : port);
    }

    private static EmbeddedZooKeeper start0(int port) throws Exception {
        Path dir = Files.createTempDirectory("lockctl-zookeeper-");
        Properties config = configuration(port, 500);
        ZooKeeperServerEmbedded server = ZooKeeperServerEmbedded.builder()
                .baseDir(dir)
                .configuration(config)
                .exitHandler(ExitHandler.LOG_ONLY)
                .build();
        try {
            server.start(30_000);
        } catch (Exception e) {
            server.close();
            delete(dir);
            throw e;
        }
        return new EmbeddedZooKeeper(server, dir, port);
    }

    /**
     * The standalone server's configuration lockctl starts with (the embedded one and the one in a process of its own,
     * {@link ProcessZooKeeper}): a loopback {@code port}, {@code tickMillis}, no admin server, no fsync of the log.
     */
    static Properties configuration(int port, int tickMillis) {
        Properties config = new Properties();
        config.setProperty("clientPort", Integer.toString(port));
        config.setProperty("clientPortAddress", "127.0.0.1");
        config.setProperty("tickTime", Integer.toString(tickMillis));
        config.setProperty("initLimit", "10");
        config.setProperty("syncLimit", "5");
        config.setProperty("maxClientCnxns", "0");
        config.setProperty("maxCnxns", "0");
        config.setProperty("minSessionTimeout", Integer.toString(Math.max(1000, 2 * tickMillis)));
        config.setProperty("maxSessionTimeout", "120000");
        config.setProperty("admin.enableServer", "false");
        config.setProperty("forceSync", "no");
        return config;
    }

    /** The lock URI of this server, with {@code basePath} as the locks' base path. */
    String uri(String basePath) {
        return "zk://" + address() + "/" + basePath;
    }

    /** {@code 127.0.0.1:<port>}. */
    String address() {
        return "127.0.0.1:" + port;
    }

    @Override
    public void close() {
        server.close();
        delete(dir);
    }

    /** A free port of the loopback interface. */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Deletes {@code dir} and everything in it, as far as it can. */
    static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp directory left behind is harmless
        }
    }
}
