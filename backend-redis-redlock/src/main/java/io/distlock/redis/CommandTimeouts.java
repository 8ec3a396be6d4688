package io.distlock.redis;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fails the commands of one master that outlive their timeout, with one timer armed at a time instead of one per
 * command. A timer per command (what {@code orTimeout} does) is armed and cancelled on every round trip, and on an
 * otherwise idle timer thread each arming wakes that thread: a context switch per command, which cost more than the
 * round trip itself on a busy machine. Here a command joins a queue, and a check runs at the earliest deadline still
 * pending: it drops the answered commands, fails the late ones with a {@link TimeoutException}, and arms itself again
 * for the next deadline. With commands streaming, that is one check per timeout, however many commands.
 *
 * <p>The check runs on the JDK's shared delay thread (the one behind {@code orTimeout}), and so do the continuations
 * of the commands it fails, as before.
 */
final class CommandTimeouts {

    private static final long NOT_ARMED = Long.MAX_VALUE;

    private final ConcurrentLinkedQueue<Bounded> pending = new ConcurrentLinkedQueue<>();
    /** When the next check runs (a {@link System#nanoTime()} reading), {@link #NOT_ARMED} if none is due. */
    private final AtomicLong armedFor = new AtomicLong(NOT_ARMED);
    /** How many checks were armed; for tests. */
    private final AtomicLong armings = new AtomicLong();

    private record Bounded(CompletableFuture<?> command, long deadline) {}

    /**
     * Returns {@code command}, failed with a {@link TimeoutException} if it has not completed {@code timeout} from
     * now (a little later when the delay thread is late, never sooner).
     */
    <T> CompletableFuture<T> bound(CompletableFuture<T> command, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        pending.add(new Bounded(command, deadline));
        armFor(deadline);
        return command;
    }

    /** How many bounded commands are remembered now (answered ones until the next check); for tests. */
    int remembered() {
        return pending.size();
    }

    /** How many checks were armed so far; for tests. */
    long armings() {
        return armings.get();
    }

    /** Makes sure a check runs by {@code deadline}: arms one unless one is due at that time or sooner. */
    private void armFor(long deadline) {
        while (true) {
            long armed = armedFor.get();
            if (armed != NOT_ARMED && armed - deadline <= 0) {
                return;
            }
            if (armedFor.compareAndSet(armed, deadline)) {
                armings.incrementAndGet();
                long delay = Math.max(0, deadline - System.nanoTime());
                CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS, Runnable::run)
                        .execute(this::check);
                return;
            }
        }
    }

    /**
     * Drops the answered commands, fails the late ones, and arms for the earliest deadline left. The flag is reset
     * before the queue is read: a command added meanwhile either is seen here or arms a check of its own.
     */
    private void check() {
        armedFor.set(NOT_ARMED);
        long now = System.nanoTime();
        long next = NOT_ARMED;
        for (Iterator<Bounded> it = pending.iterator(); it.hasNext(); ) {
            Bounded b = it.next();
            if (b.command().isDone()) {
                it.remove();
            } else if (now - b.deadline() >= 0) {
                it.remove();
                b.command().completeExceptionally(new TimeoutException());
            } else if (next == NOT_ARMED || b.deadline() - next < 0) {
                next = b.deadline();
            }
        }
        if (next != NOT_ARMED) {
            armFor(next);
        }
    }
}
