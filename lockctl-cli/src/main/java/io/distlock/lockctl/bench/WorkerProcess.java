package io.distlock.lockctl.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.distlock.spi.Redaction;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** One worker JVM seen from the engine: started with this JVM's classpath, driven by {@link BenchWorker}'s lines. */
final class WorkerProcess implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final WorkerTask task;
    private final Path log;
    /** One permit per {@code READY} the worker printed; released plenty once it has ended, so no wait hangs. */
    private final Semaphore ready = new Semaphore(0);

    private final CountDownLatch finished = new CountDownLatch(1);
    private final AtomicLong progress = new AtomicLong();
    private final AtomicReference<String> error = new AtomicReference<>();
    private final Thread reader;
    /** Told every other line (a failover worker's {@code LEAD}, {@code STEP} and {@code CLOCK}). */
    private final Consumer<String> lines;

    private WorkerProcess(Process process, WorkerTask task, Path log, Consumer<String> lines) {
        this.process = process;
        this.task = task;
        this.log = log;
        this.lines = lines;
        this.reader = new Thread(this::readLines, "bench-worker-" + task.index());
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a worker JVM for {@code task}, given on its stdin as the first line; its log goes to {@code dir}, and with
     * {@code flightRecorder} a JDK Flight Recorder recording ({@code profile} settings) of the whole worker to {@code
     * dir/<name>.jfr}. The task is neither written to a file nor put on the command line: its store URIs may carry a
     * password ({@code password=}), and a file would outlive the run, a command line be readable by every local user.
     */
    static WorkerProcess start(WorkerTask task, Path dir, String name, boolean flightRecorder) throws IOException {
        return start(task, dir, name, flightRecorder, line -> {});
    }

    /** {@link #start(WorkerTask, Path, String, boolean)}, telling {@code lines} every line the engine does not read. */
    static WorkerProcess start(WorkerTask task, Path dir, String name, boolean flightRecorder, Consumer<String> lines)
            throws IOException {
        Files.createDirectories(dir);
        Path log = dir.resolve(name + ".log");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms64m");
        command.add("-Xmx512m");
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        if (flightRecorder) {
            command.add("-XX:StartFlightRecording=settings=profile,filename=" + dir.resolve(name + ".jfr"));
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(BenchWorker.class.getName());
        Process p = new ProcessBuilder(command)
                .redirectError(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .start();
        Writer stdin = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
        stdin.write(JSON.writeValueAsString(task) + "\n"); // one line: Jackson writes no line break unless asked
        stdin.flush();
        return new WorkerProcess(p, task, log, lines);
    }

    private void readLines() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals(BenchWorker.READY)) {
                    ready.release();
                } else if (line.startsWith(BenchWorker.PROGRESS)) {
                    // the worker's threads may print their counts out of order
                    long done = Long.parseLong(
                            line.substring(BenchWorker.PROGRESS.length()).trim());
                    progress.accumulateAndGet(done, Math::max);
                } else if (line.equals(BenchWorker.DONE)) {
                    break;
                } else if (line.startsWith(BenchWorker.ERROR)) {
                    error.set(line.substring(BenchWorker.ERROR.length()));
                    break;
                } else {
                    lines.accept(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            error.compareAndSet(null, "lost the worker's output: " + e);
        } finally {
            finished.countDown();
            ready.release(Integer.MAX_VALUE / 2);
        }
    }

    /**
     * Waits until the worker is ready for its next start (it has opened its target and warmed up); throws if it failed
     * instead.
     */
    void awaitReady(long timeoutMillis) throws InterruptedException {
        if (!ready.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS)) {
            throw failure("did not get ready within " + timeoutMillis + " ms");
        }
        if (finished.getCount() == 0) {
            throw failure(null);
        }
    }

    /** Tells the worker to start at {@code startNanos} of the host's monotonic clock. */
    void go(long startNanos) throws IOException {
        Writer w = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        w.write(BenchWorker.GO + startNanos + "\n");
        w.flush();
    }

    /** Sends {@code line} to the worker (a failover worker's {@code CLOCK}, {@code STEP}, {@code EXIT}). */
    void send(String line) throws IOException {
        Writer w = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        w.write(line + "\n");
        w.flush();
    }

    /** Kills the worker's JVM with SIGKILL (no shutdown hook, no goodbye to the store), without waiting. */
    void kill() {
        process.destroyForcibly();
    }

    /** Whether the worker ended (it printed its last line, failed or was killed). */
    boolean ended() {
        return finished.getCount() == 0;
    }

    /** Acquisitions done so far, as last reported. */
    long progress() {
        return progress.get();
    }

    /** Waits up to {@code millis} for the worker to finish; true once it has. */
    boolean awaitFinished(long millis) throws InterruptedException {
        return finished.await(millis, TimeUnit.MILLISECONDS);
    }

    /** The worker's result, once finished; throws with its error otherwise. */
    WorkerResult result() throws IOException, InterruptedException {
        finished.await();
        process.waitFor(30, TimeUnit.SECONDS);
        Path file = Path.of(task.resultFile());
        if (error.get() != null || !Files.isRegularFile(file)) {
            throw failure(null);
        }
        return JSON.readValue(file.toFile(), WorkerResult.class);
    }

    /** The failure of this worker: {@code what}, else its error, naming its log. */
    BenchException failure(String what) {
        String why = what != null ? what : error.get() != null ? error.get() : "exited without a result";
        return new BenchException("Worker " + task.index() + " on "
                + task.specs().stream().map(Redaction::uri).collect(Collectors.joining(", ")) + " failed: "
                + why + " (log: " + log + ")");
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
