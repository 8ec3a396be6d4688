package io.distlock.etcd;

import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.testing.EtcdCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * One run of the real {@code etcdctl} (API v3, installed with the {@code etcd-client} package; {@code scripts/test}
 * installs it) against the first member of a fixture: its output (stdout and stderr) read line by line on a daemon
 * thread, stopped with SIGINT, as a user's Ctrl-C, and killed by {@link #close()} if it does not exit then, so a failed
 * test leaves no process behind. For the interop tests of fair mode ({@link EtcdctlInteropTest}, {@link
 * EtcdctlElectInteropTest}).
 */
final class Etcdctl implements AutoCloseable {

    private final Process process;
    private final List<String> output = new CopyOnWriteArrayList<>();

    private Etcdctl(Process process) {
        this.process = process;
    }

    /**
     * Starts {@code etcdctl --endpoints=<member 0> <args...>}.
     *
     * @throws AssertionError naming the install command if etcdctl is not installed
     */
    static Etcdctl start(EtcdCluster etcd, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Files.isExecutable(Path.of("/usr/bin/etcdctl")) ? "/usr/bin/etcdctl" : "etcdctl");
        command.add("--endpoints=" + etcd.member(0).endpoint());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("ETCDCTL_API", "3");
        Etcdctl etcdctl;
        try {
            etcdctl = new Etcdctl(builder.start());
        } catch (IOException e) {
            throw new AssertionError("etcdctl is not installed; install it with " + EtcdCluster.INSTALL_COMMAND, e);
        }
        Thread reader = new Thread(etcdctl::read, "etcdctl-output-" + etcdctl.process.pid());
        reader.setDaemon(true);
        reader.start();
        return etcdctl;
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                output.add(line);
            }
        } catch (IOException ended) {
            // the process ended
        }
    }

    /** The lines printed so far. */
    List<String> output() {
        return List.copyOf(output);
    }

    /** Whether {@code line} was printed, as a whole line. */
    boolean printed(String line) {
        return output.contains(line);
    }

    /** Waits until {@code line} is printed, at most {@code maxWait}; fails naming {@code what} and the output. */
    void awaitLine(String line, Duration maxWait, String what) {
        Deadlines.await(() -> printed(line), maxWait, () -> what + ": etcdctl printed " + output);
    }

    /** Sends SIGINT (Ctrl-C): {@code etcdctl elect} resigns or withdraws, {@code etcdctl lock} releases. */
    void interrupt() throws IOException, InterruptedException {
        if (process.isAlive()) {
            new ProcessBuilder("kill", "-INT", Long.toString(process.pid()))
                    .start()
                    .waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Waits for the process to exit, at most {@code maxWait}; fails if it does not. */
    int awaitExit(Duration maxWait) throws InterruptedException {
        if (!process.waitFor(maxWait.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("etcdctl did not exit within " + maxWait + "; it printed " + output);
        }
        return process.exitValue();
    }

    /** SIGINT, then SIGKILL if it has not exited within a few seconds. */
    @Override
    public void close() throws Exception {
        try {
            interrupt();
            if (process.waitFor(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS)) {
                return;
            }
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
