package io.distlock.kit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Runs the same work on several threads started together, and waits for them with a deadline. */
final class Concurrently {

    /** The work of one thread; {@code index} runs from 0 to threads - 1. */
    @FunctionalInterface
    interface Work {
        void run(int index) throws Exception;
    }

    private Concurrently() {}

    /**
     * Starts {@code threads} threads running {@code work}, released together, and waits until all finish.
     *
     * @throws AssertionError if one failed (its failure, the others suppressed), or if some did not finish within
     *     {@code deadline} (they are interrupted and named, with their stacks)
     */
    static void run(String name, int threads, Duration deadline, Work work) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> started = new ArrayList<>(threads);
        for (int i = 0; i < threads; i++) {
            int index = i;
            Thread t = new Thread(
                    () -> {
                        try {
                            start.await();
                            work.run(index);
                        } catch (Throwable e) {
                            if (!failure.compareAndSet(null, e)) {
                                failure.get().addSuppressed(e);
                            }
                        }
                    },
                    "kit-" + name + "-" + i);
            t.setDaemon(true);
            t.start();
            started.add(t);
        }
        start.countDown();
        long end = System.nanoTime() + deadline.toNanos();
        List<Thread> stuck = new ArrayList<>();
        for (Thread t : started) {
            long left = end - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.timedJoin(t, left);
            }
            if (t.isAlive()) {
                stuck.add(t);
            }
        }
        if (!stuck.isEmpty()) {
            StringBuilder message = new StringBuilder()
                    .append(stuck.size())
                    .append(" of ")
                    .append(threads)
                    .append(" threads of '")
                    .append(name)
                    .append("' did not finish within ")
                    .append(deadline)
                    .append(" (deadlock or starvation?):");
            for (Thread t : stuck) {
                message.append("\n  ").append(t.getName());
                for (StackTraceElement frame : t.getStackTrace()) {
                    message.append("\n      at ").append(frame);
                }
                t.interrupt();
            }
            AssertionError error = new AssertionError(message.toString());
            if (failure.get() != null) {
                error.addSuppressed(failure.get());
            }
            throw error;
        }
        Throwable first = failure.get();
        if (first instanceof AssertionError a) {
            throw a;
        }
        if (first != null) {
            throw new AssertionError("A thread of '" + name + "' failed: " + first, first);
        }
    }
}
