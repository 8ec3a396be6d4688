package io.distlock.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time and in the order given, on an executor that may run several at once: a candidacy's calls
 * to its listener, an observer's calls to its consumer. A task that throws is logged and the next one runs; an executor
 * that refuses (shut down) leaves the tasks to the calling thread.
 */
final class SerialExecutor implements Executor {

    private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

    private final Executor executor;
    private final String what;
    private final Deque<Runnable> tasks = new ArrayDeque<>(); // guarded by this
    private boolean draining; // guarded by this

    /**
     * @param executor where the tasks run
     * @param what what the tasks call, for the log
     */
    SerialExecutor(Executor executor, String what) {
        this.executor = executor;
        this.what = what;
    }

    @Override
    public void execute(Runnable task) {
        enqueue(task).run();
    }

    /**
     * Queues {@code task} and returns what starts the queue's run: to be run by the caller once it holds no lock of
     * its own, so that the order of tasks can be fixed under a caller's lock without running them under it (a direct
     * executor would). A no-op when the queue runs already.
     */
    Runnable enqueue(Runnable task) {
        synchronized (this) {
            tasks.add(task);
            if (draining) {
                return () -> {};
            }
            draining = true;
        }
        return () -> {
            try {
                executor.execute(this::drain);
            } catch (RejectedExecutionException shutDown) {
                drain();
            }
        };
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (this) {
                next = tasks.poll();
                if (next == null) {
                    draining = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException e) {
                log.warn("{} threw", what, e);
            }
        }
    }
}
