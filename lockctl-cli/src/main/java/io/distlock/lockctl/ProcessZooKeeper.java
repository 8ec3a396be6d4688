package io.distlock.lockctl;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * A ZooKeeper server in a JVM of its own, child of the lockctl process: ZooKeeper's {@code QuorumPeerMain} standalone
 * (tick 1000 ms), on a free loopback port, its data in a temporary directory. Unlike {@link EmbeddedZooKeeper} it
 * shares no heap, garbage collector or JIT compiler with lockctl, as a server users run does not. {@link #close()}
 * kills it and removes the directory; so does a shutdown hook, should lockctl exit without closing it, and the child
 * removes the directory and exits by itself when its standard input ends, which it does when lockctl dies, even by
 * SIGKILL.
 */
final class ProcessZooKeeper implements AutoCloseable {

    /** The server's tick, ZooKeeper's unit of session timeouts: a common production setting (ZooKeeper's default: 2 s). */
    static final int TICK_MILLIS = 1000;

    /** The child's first argument, which {@code ps} shows however long the class path after it. */
    static final String MARKER = "-Dlockctl.zookeeper.process=true";

    private static final long START_TIMEOUT_MILLIS = 60_000;
    private static final String LOG = "zookeeper.log";

    private final Process process;
    private final Path dir;
    private final int port;
    private final Thread hook;

    private ProcessZooKeeper(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
        this.hook = new Thread(this::stop, "lockctl-zookeeper-process-stop");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Starts a server on a free port of 127.0.0.1 and waits until it answers {@code ruok}. */
    static ProcessZooKeeper start() throws IOException, InterruptedException {
        int port = EmbeddedZooKeeper.freePort();
        Path dir = Files.createTempDirectory("lockctl-zookeeper-process-");
        Properties config = EmbeddedZooKeeper.configuration(port, TICK_MILLIS);
        config.setProperty("dataDir", dir.resolve("data").toString());
        config.setProperty("4lw.commands.whitelist", "ruok");
        Path file = dir.resolve("zoo.cfg");
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            config.store(out, "lockctl: a ZooKeeper server in a process of its own");
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add(MARKER);
        command.add("-Xmx512m");
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        command.add("-Dzookeeper.admin.enableServer=false");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ProcessZooKeeper.class.getName());
        command.add(file.toString());
        Process process;
        try {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve(LOG).toFile())
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .start();
        } catch (IOException e) {
            EmbeddedZooKeeper.delete(dir);
            throw e;
        }
        ProcessZooKeeper server = new ProcessZooKeeper(process, dir, port);
        try {
            server.awaitServing();
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    private void awaitServing() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (!answersRuok()) {
            if (!process.isAlive()) {
                throw new IOException("The ZooKeeper server process exited with code " + process.exitValue()
                        + " before serving; its log:\n" + log());
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("The ZooKeeper server process did not serve on 127.0.0.1:" + port + " within "
                        + START_TIMEOUT_MILLIS + " ms; its log:\n" + log());
            }
            Thread.sleep(50);
        }
    }

    private boolean answersRuok() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write("ruok".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).equals("imok");
        } catch (IOException e) {
            return false;
        }
    }

    private String log() {
        try {
            String text = Files.readString(dir.resolve(LOG));
            return text.length() > 4000 ? text.substring(text.length() - 4000) : text;
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** The lock URI of this server, with {@code basePath} as the locks' base path. */
    String uri(String basePath) {
        return "zk://" + address() + "/" + basePath;
    }

    /** {@code 127.0.0.1:<port>}. */
    String address() {
        return "127.0.0.1:" + port;
    }

    /** The server's process, while it runs and after. */
    ProcessHandle handle() {
        return process.toHandle();
    }

    /** The server's temporary directory (configuration, data, log), removed by {@link #close()}. */
    Path directory() {
        return dir;
    }

    /** Kills the server, waits for its end and removes its directory. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs stop() anyway
        }
        stop();
    }

    private synchronized void stop() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                return; // left to the kernel; the directory too, rather than delete under a live server
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        EmbeddedZooKeeper.delete(dir);
    }

    /**
     * The child's entry point: ZooKeeper's {@code QuorumPeerMain} on the configuration file {@code args[0]}, ended when
     * its standard input ends (lockctl, holding the other end, has exited or died), after removing the directory of
     * that file.
     */
    public static void main(String[] args) {
        Thread watcher = new Thread(
                () -> {
                    try {
                        while (System.in.read() >= 0) {
                            // lockctl writes nothing; only the end matters
                        }
                    } catch (IOException e) {
                        // the pipe broke: lockctl is gone too
                    }
                    // lockctl, gone, will not remove the directory (configuration, data, log): this process does
                    EmbeddedZooKeeper.delete(Path.of(args[0]).toAbsolutePath().getParent());
                    Runtime.getRuntime().halt(0);
                },
                "lockctl-parent-watcher");
        watcher.setDaemon(true);
        watcher.start();
        QuorumPeerMain.main(args);
    }
}
