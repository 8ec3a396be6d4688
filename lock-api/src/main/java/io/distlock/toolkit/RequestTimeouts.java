package io.distlock.toolkit;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fails the requests a backend sent to its store that outlive their timeout, with one timer armed at a time instead of
 * one per request. A timer per request (what {@link CompletableFuture#orTimeout} does) is armed and cancelled on
 * every round trip, and on an otherwise idle timer thread each arming wakes that thread: a context switch per request,
 * which cost more than the round trip itself on a busy machine. Here a request joins a queue, and a check runs at the
 * earliest deadline still pending: it drops the answered requests, fails the late ones with a {@link
 * TimeoutException}, and arms itself again for the next deadline. With requests streaming, that is one check per
 * timeout, however many requests.
 *
 * <p>The check runs on the JDK's shared delay thread (the one behind {@code orTimeout}), and so do the continuations
 * of the requests it fails. Thread-safe; one instance per connection or per backend.
 */
public final class RequestTimeouts {

    private static final long NOT_ARMED = Long.MAX_VALUE;

    private final ConcurrentLinkedQueue<Bounded> pending = new ConcurrentLinkedQueue<>();
    /** When the next check runs (a {@link System#nanoTime()} reading), {@link #NOT_ARMED} if none is due. */
    private final AtomicLong armedFor = new AtomicLong(NOT_ARMED);
    /** How many checks were armed. */
    private final AtomicLong armings = new AtomicLong();

    private record Bounded(CompletableFuture<?> request, long deadline) {}

    /**
     * Returns {@code request}, failed with a {@link TimeoutException} if it has not completed {@code timeout} from now
     * (a little later when the delay thread is late, never sooner).
     */
    public <T> CompletableFuture<T> bound(CompletableFuture<T> request, Duration timeout) {
        return bound(request, timeout.toNanos());
    }

    private <T> CompletableFuture<T> bound(CompletableFuture<T> request, long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        pending.add(new Bounded(request, deadline));
        armFor(deadline);
        return request;
    }

    /** How many bounded requests are remembered now (answered ones until the next check); for tests. */
    public int remembered() {
        return pending.size();
    }

    /** How many checks were armed so far; for tests. */
    public long armings() {
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
     * Drops the answered requests, fails the late ones, and arms for the earliest deadline left. The flag is reset
     * before the queue is read: a request added meanwhile either is seen here or arms a check of its own.
     */
    private void check() {
        armedFor.set(NOT_ARMED);
        long now = System.nanoTime();
        long next = NOT_ARMED;
        for (Iterator<Bounded> it = pending.iterator(); it.hasNext(); ) {
            Bounded b = it.next();
            if (b.request().isDone()) {
                it.remove();
            } else if (now - b.deadline() >= 0) {
                it.remove();
                b.request().completeExceptionally(new TimeoutException());
            } else if (next == NOT_ARMED || b.deadline() - next < 0) {
                next = b.deadline();
            }
        }
        if (next != NOT_ARMED) {
            armFor(next);
        }
    }
}
