package io.distlock.testing;

import io.distlock.kit.Signals;
import io.distlock.kit.TestTimeouts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One external server process (a {@code redis-server}, an {@code etcd} member, a forked JVM) under a test's control:
 * started with {@link ProcessBuilder}, its output appended to a log file, readiness awaited with a deadline through a
 * caller-given {@link ReadinessProbe}, and the faults a test needs: {@link #stop() stop} (SIGTERM, then SIGKILL),
 * {@link #kill9() kill -9}, {@link #pause() pause} (SIGSTOP) / {@link #resume() resume} (SIGCONT) and {@link #restart()
 * restart} with the same command, hence the same ports and data directory.
 *
 * <p>Every started process is registered with one JVM shutdown hook that kills it if the JVM exits while it still
 * runs (a JVM killed with SIGKILL runs no hook; nothing can help then). Instances are thread-safe.
 *
 * <pre>{@code
 * ServerProcess redis = ServerProcess.builder("redis-1", List.of("redis-server", "--port", "6400"))
 *         .logFile(dir.resolve("redis-1.log"))
 *         .readiness(() -> ping(6400), Duration.ofSeconds(10))
 *         .build();
 * redis.start();   // returns once ping(6400) is true
 * redis.kill9();
 * redis.restart(); // same command, waits for readiness again
 * redis.close();
 * }</pre>
 */
public final class ServerProcess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ServerProcess.class);
    private static final Duration DEFAULT_READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration DEFAULT_STOP_GRACE = Duration.ofSeconds(5);
    private static final long PROBE_INTERVAL_MILLIS = 20;
    private static final int LOG_TAIL_LINES = 30;

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            for (Process p : LIVE) {
                                p.descendants().forEach(ProcessHandle::destroyForcibly);
                                p.destroyForcibly();
                            }
                        },
                        "distlock-server-process-reaper"));
    }

    /**
     * Tells whether a started server is ready to serve. Return {@code false} or throw while it is not; the exception
     * of the last attempt is attached to the timeout error.
     */
    @FunctionalInterface
    public interface ReadinessProbe {
        /** One attempt; must not block for long (use short socket/HTTP timeouts). */
        boolean isReady() throws Exception;
    }

    private final String name;
    private final List<String> command;
    private final Map<String, String> environment;
    private final Path workingDirectory;
    private final Path logFile;
    private final ReadinessProbe probe;
    private final Duration readyTimeout;
    private final Duration stopGrace;

    private Process process;
    private boolean paused;

    private ServerProcess(Builder b) {
        this.name = b.name;
        this.command = List.copyOf(b.command);
        this.environment = Map.copyOf(b.environment);
        this.workingDirectory = b.workingDirectory;
        this.logFile =
                b.logFile != null ? b.logFile : FixtureDirs.create(b.name).resolve(b.name + ".log");
        this.probe = b.probe;
        this.readyTimeout = b.readyTimeout;
        this.stopGrace = b.stopGrace;
    }

    /**
     * A builder for a process named {@code name} (used in logs, errors and thread names) running {@code command}
     * (program first, then its arguments).
     *
     * @throws IllegalArgumentException if {@code command} is empty
     */
    public static Builder builder(String name, List<String> command) {
        return new Builder(name, command);
    }

    /** The name given to the builder. */
    public String name() {
        return name;
    }

    /** The command line, program first. */
    public List<String> command() {
        return command;
    }

    /** The file the process's stdout and stderr are appended to (across restarts). */
    public Path logFile() {
        return logFile;
    }

    /**
     * Starts the process and, if a readiness probe was given, blocks until it reports ready.
     *
     * @throws IllegalStateException if it is already running, cannot be started, exits before it is ready, or is not
     *     ready within the (scaled) readiness timeout; the message includes the tail of the log
     */
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        if (workingDirectory != null) {
            pb.directory(workingDirectory.toFile());
        }
        pb.environment().putAll(environment);
        try {
            Files.createDirectories(logFile.toAbsolutePath().getParent());
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "Cannot start " + name + " (" + String.join(" ", command) + "): " + e.getMessage(), e);
        }
        paused = false;
        LIVE.add(process);
        LOG.debug("Started {} (pid {}): {}", name, process.pid(), String.join(" ", command));
        if (probe != null) {
            awaitReady(probe, readyTimeout);
        }
    }

    /**
     * Blocks until {@code probe} reports ready, polling every 20 ms.
     *
     * @throws IllegalStateException if the process is not running, exits while waiting, or the probe does not report
     *     ready within {@code timeout} (scaled by {@link TestTimeouts}); the message includes the tail of the log
     */
    public void awaitReady(ReadinessProbe probe, Duration timeout) {
        Objects.requireNonNull(probe, "probe");
        Duration scaled = TestTimeouts.scaled(timeout);
        long deadline = System.nanoTime() + scaled.toNanos();
        Exception last = null;
        while (true) {
            Process p = startedProcess();
            if (!p.isAlive()) {
                throw new IllegalStateException(
                        name + " exited with code " + p.exitValue() + " before it was ready" + logTailForError());
            }
            try {
                if (probe.isReady()) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted waiting for " + name + " to be ready", e);
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        name + " not ready within " + scaled.toMillis() + " ms"
                                + (last != null ? " (last probe error: " + last + ")" : "")
                                + logTailForError(),
                        last);
            }
            sleep(PROBE_INTERVAL_MILLIS);
        }
    }

    /** Whether the process has been started and has not exited (a paused process is running). */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Whether the process is paused by {@link #pause()} and not yet resumed. */
    public synchronized boolean isPaused() {
        return paused && isRunning();
    }

    /**
     * The pid of the running process.
     *
     * @throws IllegalStateException if it is not running
     */
    public synchronized long pid() {
        return currentProcess().pid();
    }

    /**
     * Stops the process gracefully: SIGTERM, then SIGKILL if it has not exited within the stop grace period (scaled).
     * Resumes a paused process first so it can handle SIGTERM. Processes it forked are killed too. Blocks until the
     * process has exited. Does nothing if it is not running.
     */
    public synchronized void stop() {
        if (!isRunning()) {
            return;
        }
        if (paused) {
            Signals.resume(process.pid());
            paused = false;
        }
        List<ProcessHandle> children = process.descendants().collect(Collectors.toList());
        process.destroy();
        if (!waitFor(process, TestTimeouts.scaled(stopGrace))) {
            LOG.debug("{} did not exit on SIGTERM within {}; sending SIGKILL", name, stopGrace);
            process.destroyForcibly();
            waitFor(process, TestTimeouts.scaled(Duration.ofSeconds(10)));
        }
        killAll(children);
        LIVE.remove(process);
        LOG.debug("Stopped {}", name);
    }

    /**
     * Kills the process (and any process it forked) with SIGKILL: no clean-up, like a crash of the process, though
     * not of the OS page cache. Blocks until it has exited.
     *
     * @throws IllegalStateException if it is not running
     */
    public synchronized void kill9() {
        Process p = currentProcess();
        List<ProcessHandle> children = p.descendants().collect(Collectors.toList());
        Signals.kill(p.pid());
        waitFor(p, TestTimeouts.scaled(Duration.ofSeconds(10)));
        killAll(children);
        paused = false;
        LIVE.remove(p);
        LOG.debug("Killed {} (pid {})", name, p.pid());
    }

    /**
     * Freezes the process with SIGSTOP: it keeps its sockets open but answers nothing until {@link #resume()}.
     *
     * @throws IllegalStateException if it is not running
     */
    public synchronized void pause() {
        Signals.pause(currentProcess().pid());
        paused = true;
    }

    /**
     * Thaws a process frozen by {@link #pause()} with SIGCONT.
     *
     * @throws IllegalStateException if it is not running
     */
    public synchronized void resume() {
        Signals.resume(currentProcess().pid());
        paused = false;
    }

    /**
     * Stops the process if it runs (see {@link #stop()}) and starts it again with the same command, environment and
     * directories, so with the same ports and data; blocks until ready as {@link #start()} does.
     */
    public synchronized void restart() {
        stop();
        start();
    }

    /** The last lines of the log file, for error messages; empty if there is no log yet. */
    public String logTail(int lines) {
        try {
            if (!Files.exists(logFile)) {
                return "";
            }
            List<String> all = Files.readAllLines(logFile, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + logFile + ": " + e + ")";
        }
    }

    /** The exit code if the process has been started and has exited. */
    public synchronized Optional<Integer> exitCode() {
        return process == null || process.isAlive() ? Optional.empty() : Optional.of(process.exitValue());
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public synchronized String toString() {
        return "ServerProcess[" + name + (isRunning() ? ", pid " + pid() : ", not running") + "]";
    }

    private synchronized Process currentProcess() {
        if (process == null || !process.isAlive()) {
            throw new IllegalStateException(name + " is not running"
                    + (process == null ? " (never started)" : " (exited with code " + process.exitValue() + ")"));
        }
        return process;
    }

    private synchronized Process startedProcess() {
        if (process == null) {
            throw new IllegalStateException(name + " was never started");
        }
        return process;
    }

    private String logTailForError() {
        return "\n--- last lines of " + logFile + " ---\n" + logTail(LOG_TAIL_LINES);
    }

    /** Processes the server forked (e.g. a shell's child) would outlive it as orphans; kill them too. */
    private static void killAll(List<ProcessHandle> processes) {
        for (ProcessHandle h : processes) {
            h.destroyForcibly();
        }
    }

    private static boolean waitFor(Process p, Duration timeout) {
        try {
            return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IllegalStateException("Interrupted waiting for pid " + p.pid() + " to exit", e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
    }

    /** Builds a {@link ServerProcess}; nothing is started until {@link ServerProcess#start()}. */
    public static final class Builder {
        private final String name;
        private final List<String> command;
        private final Map<String, String> environment = new LinkedHashMap<>();
        private Path workingDirectory;
        private Path logFile;
        private ReadinessProbe probe;
        private Duration readyTimeout = DEFAULT_READY_TIMEOUT;
        private Duration stopGrace = DEFAULT_STOP_GRACE;

        private Builder(String name, List<String> command) {
            this.name = Objects.requireNonNull(name, "name");
            this.command = new ArrayList<>(Objects.requireNonNull(command, "command"));
            if (this.command.isEmpty()) {
                throw new IllegalArgumentException("command of " + name + " is empty; give the program first");
            }
        }

        /** The log file (appended to); default {@code target/distlock-fixtures/<name>-.../<name>.log}. */
        public Builder logFile(Path logFile) {
            this.logFile = Objects.requireNonNull(logFile, "logFile");
            return this;
        }

        /** The working directory of the process; default the JVM's. */
        public Builder workingDirectory(Path dir) {
            this.workingDirectory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /** Adds an environment variable to the inherited environment. */
        public Builder environment(String key, String value) {
            environment.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** The probe {@link #start()} and {@link #restart()} wait on, and for how long at most (scaled). */
        public Builder readiness(ReadinessProbe probe, Duration timeout) {
            this.probe = Objects.requireNonNull(probe, "probe");
            this.readyTimeout = positive(timeout, "timeout");
            return this;
        }

        /** How long {@link #stop()} waits after SIGTERM before SIGKILL (scaled); default 5 s. */
        public Builder stopGrace(Duration grace) {
            this.stopGrace = positive(grace, "grace");
            return this;
        }

        /** The process, not started. */
        public ServerProcess build() {
            return new ServerProcess(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
        }
    }
}
