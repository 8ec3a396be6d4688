package io.distlock.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work put off for a moment and done in batches on a timer thread: each item {@linkplain #add added} from any thread is
 * handed to the action on the scheduler's thread at most {@code delay} later, together with the items added meanwhile.
 * For work that most items no longer need by then, such as the timers or the watch of a lock that is usually released
 * within milliseconds: the action can skip what is done with, and what is left costs one pass per batch instead of one
 * timer per item.
 *
 * <p>While items keep coming, each pass sets the next one itself, from the timer thread, and an adding thread sets no
 * timer: setting one that becomes the scheduler's earliest wakes the timer thread only to compute its wait again (a
 * system call on the adding thread, and a context switch), which a lock granted hundreds of times a second paid at
 * every batch. A pass that finds nothing to do sets no further pass; the next item added sets one.
 *
 * @param <T> the items
 */
final class DeferredBatches<T> {

    private static final Logger log = LoggerFactory.getLogger(DeferredBatches.class);

    private final ScheduledExecutorService timer;
    private final long delayNanos;
    private final Consumer<? super T> action;
    private final Queue<T> items = new ConcurrentLinkedQueue<>();
    /** Whether a pass is set (or running and about to decide whether to set the next). */
    private final AtomicBoolean armed = new AtomicBoolean();

    private final LongAdder passesSetByAdders = new LongAdder();
    private final LongAdder passesSet = new LongAdder();

    /**
     * @param timer the scheduler whose thread runs the action; its tasks must not block
     * @param delay the longest an item waits for its pass; positive
     * @param action what to do with each item; runs on the timer thread, must not block, and an exception it throws is
     *     logged and does not stop the others
     */
    DeferredBatches(ScheduledExecutorService timer, Duration delay, Consumer<? super T> action) {
        this.timer = Objects.requireNonNull(timer, "timer");
        this.action = Objects.requireNonNull(action, "action");
        if (delay.isNegative() || delay.isZero()) {
            throw new IllegalArgumentException("delay must be positive, got " + delay);
        }
        this.delayNanos = delay.toNanos();
    }

    /** Puts {@code item} off until the next pass, setting one if none is set. Dropped if the scheduler is shut down. */
    void add(T item) {
        items.add(Objects.requireNonNull(item, "item"));
        if (armed.compareAndSet(false, true)) {
            passesSetByAdders.increment();
            if (!setPass()) {
                armed.set(false);
            }
        }
    }

    /** How many passes adding threads have set so far (the others were set by passes); for tests. */
    long passesSetByAdders() {
        return passesSetByAdders.sum();
    }

    /** How many passes have been set so far, by adders and by passes; for tests. */
    long passesSet() {
        return passesSet.sum();
    }

    private void pass() {
        boolean any = false;
        for (T item = items.poll(); item != null; item = items.poll()) {
            any = true;
            try {
                action.accept(item);
            } catch (RuntimeException e) {
                log.warn("Deferred work failed for {}", item, e);
            }
        }
        if (any && setPass()) {
            return; // items keep coming: the adders find a pass set
        }
        armed.set(false);
        // An item added after the last poll, while the flag was still set, has set no pass: set one for it.
        if (!items.isEmpty() && armed.compareAndSet(false, true) && !setPass()) {
            armed.set(false);
        }
    }

    /** False if the scheduler is shut down (its owner is closing: nothing is put off any more). */
    private boolean setPass() {
        try {
            timer.schedule(this::pass, delayNanos, TimeUnit.NANOSECONDS);
            passesSet.increment();
            return true;
        } catch (RejectedExecutionException closing) {
            return false;
        }
    }
}
