package io.distlock.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/**
 * A thread of a locker's worker pool, which knows whether it runs a task a backend handed to {@link
 * #backendTasks(Executor)}: a grant that such a task completes is adopted on the same thread, where it would otherwise
 * be handed to another worker for the adoption (see {@link AsyncAcquirer}). A backend's task starts on a fresh stack
 * and no application code runs under it, so adopting there cannot run a chain of hand-overs on a releasing caller's
 * stack; the mark is taken by the first grant adopted, so that a completion that the application's code causes in turn
 * (a release completing another waiter's future on this thread) goes to another worker as before.
 */
final class WorkerThread extends Thread {

    /** Whether the task running now came through {@link #backendTasks}, and no grant has been adopted under it yet. */
    private boolean inBackendTask;

    private WorkerThread(Runnable task, String name) {
        super(task, name);
    }

    /** Daemon worker threads named {@code <name>-1}, {@code <name>-2}, ... */
    static ThreadFactory factory(String name) {
        return DefaultRemoteLocker.named(name, WorkerThread::new);
    }

    /**
     * What a backend is given as its blocking executor: {@code workers}, each task marked as a backend's while it runs
     * on one of their {@link WorkerThread}s.
     */
    static Executor backendTasks(Executor workers) {
        return task -> workers.execute(() -> {
            if (!(Thread.currentThread() instanceof WorkerThread self)) {
                task.run();
                return;
            }
            self.inBackendTask = true;
            try {
                task.run();
            } finally {
                self.inBackendTask = false;
            }
        });
    }

    /**
     * Whether the calling thread runs a backend's task that has not adopted a grant yet; if so, the mark is taken (the
     * caller adopts here, and nothing after it under the same task does).
     */
    static boolean takeBackendTask() {
        if (Thread.currentThread() instanceof WorkerThread self && self.inBackendTask) {
            self.inBackendTask = false;
            return true;
        }
        return false;
    }
}
