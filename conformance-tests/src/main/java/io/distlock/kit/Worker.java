package io.distlock.kit;

import io.distlock.toolkit.DurationText;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A worker JVM started by the kit ({@link WorkerMain}), with the lines it reported so far. The kit can freeze, thaw
 * and kill it; {@link #close()} always leaves it dead. Thread-safe.
 */
final class Worker implements AutoCloseable {

    private static final String PROGRESS = "PROGRESS ";

    private final String name;
    private final Process process;
    private final Path stderr;
    private final List<String> lines = new ArrayList<>();
    private final Thread reader;

    private Worker(String name, Process process, Path stderr) {
        this.name = name;
        this.process = process;
        this.stderr = stderr;
        this.reader = new Thread(this::readLines, "kit-" + name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a worker JVM from this JVM's classpath (also when it is surefire's manifest-only booter jar, whose
     * manifest lists the real classpath), sharing the classes the first worker archived ({@link WorkerClassSharing}),
     * with {@code args} as {@code name=value} lines on its stdin: the URI may carry a password, and a command line is
     * readable by every local user ({@code ps}).
     */
    static Worker start(String name, Path dir, Map<String, String> args) throws IOException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        Optional<WorkerClassSharing> sharing = WorkerClassSharing.get();
        WorkerClassSharing.Flags sharingFlags =
                sharing.map(WorkerClassSharing::flags).orElse(WorkerClassSharing.Flags.NONE);
        List<String> command = new ArrayList<>(List.of(
                java.toString(),
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-D" + io.distlock.kit.TestTimeouts.FACTOR + "=" + io.distlock.kit.TestTimeouts.factor()));
        command.addAll(sharingFlags.jvm());
        command.addAll(List.of(
                "-cp",
                sharing.map(WorkerClassSharing::classpath).orElse(System.getProperty("java.class.path")),
                WorkerMain.class.getName()));
        StringBuilder lines = new StringBuilder();
        args.forEach((k, v) -> {
            if (v.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("worker argument " + k + " holds a line break");
            }
            lines.append(k).append('=').append(v).append('\n');
        });
        Files.createDirectories(dir);
        Path stderr = dir.resolve(name + ".stderr");
        Process process =
                new ProcessBuilder(command).redirectError(stderr.toFile()).start();
        if (sharingFlags.writes()) {
            process.onExit().thenAccept(sharing.orElseThrow()::exited);
        }
        // left open: the worker exits when its stdin closes
        OutputStream stdin = process.getOutputStream();
        stdin.write(lines.append('\n').toString().getBytes(StandardCharsets.UTF_8));
        stdin.flush();
        return new Worker(name, process, stderr);
    }

    private void readLines() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                synchronized (lines) {
                    int last = lines.size() - 1;
                    if (line.startsWith(PROGRESS)
                            && last >= 0
                            && lines.get(last).startsWith(PROGRESS)) {
                        lines.set(last, line); // a count that replaces the one before: a long run says thousands
                    } else {
                        lines.add(line);
                    }
                    lines.notifyAll();
                }
            }
        } catch (IOException ignored) {
            // the process died; what was read stays
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    /** Every line reported so far. */
    List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /** The lines reported so far that start with {@code prefix + " "}. */
    List<String> lines(String prefix) {
        return lines().stream().filter(l -> l.startsWith(prefix + " ")).toList();
    }

    /** The last line reported so far that starts with {@code prefix + " "}, if any. */
    Optional<String> last(String prefix) {
        synchronized (lines) {
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).startsWith(prefix + " ")) {
                    return Optional.of(lines.get(i));
                }
            }
            return Optional.empty();
        }
    }

    /** The first line reported that matches {@code wanted}, waiting for it up to {@code timeout}. */
    Optional<String> await(Predicate<String> wanted, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        synchronized (lines) {
            while (true) {
                Optional<String> found = lines.stream().filter(wanted).findFirst();
                if (found.isPresent()) {
                    return found;
                }
                long left = end - System.nanoTime();
                if (left <= 0 || (!process.isAlive() && !reader.isAlive())) {
                    return Optional.empty();
                }
                TimeUnit.NANOSECONDS.timedWait(lines, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
            }
        }
    }

    /** Freezes the worker (SIGSTOP). */
    void freeze() {
        Signals.pause(pid());
    }

    /** Thaws a frozen worker (SIGCONT). */
    void thaw() {
        Signals.resume(pid());
    }

    /** Kills the worker at once (SIGKILL): no release, no shutdown hook. */
    void kill() throws InterruptedException {
        Signals.kill(pid());
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /**
     * Waits for the worker to finish and returns its exit code.
     *
     * @throws AssertionError if it did not finish within {@code timeout}, with what it reported
     */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError(
                    "worker " + name + " did not finish within " + DurationText.of(timeout) + "; " + describe());
        }
        reader.join(TimeUnit.SECONDS.toMillis(5));
        return process.exitValue();
    }

    /** What the worker reported and logged, for failure messages. */
    String describe() {
        String err;
        try {
            err = Files.exists(stderr) ? Files.readString(stderr) : "";
        } catch (IOException e) {
            err = "(stderr unreadable: " + e + ")";
        }
        if (err.length() > 4000) {
            err = "..." + err.substring(err.length() - 4000);
        }
        return "worker " + name + " (pid " + pid() + ") reported " + lines()
                + (err.isBlank() ? "" : "; stderr:\n" + err);
    }

    /** Kills the worker if it still runs (thawing it first), and waits until it is gone. */
    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                Signals.resume(pid());
            } catch (RuntimeException alreadyGone) {
                // it exited meanwhile
            }
            process.destroyForcibly();
        }
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "Worker[" + name + ", pid " + pid() + "]";
    }
}
