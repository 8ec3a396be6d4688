package io.distlock.toolkit;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The waiters of keys inside one backend, woken when the backend learns that a key was released: by a holder in the
 * same backend, or by a message from the store. A {@link PollingAcquisition} registers here so that it attempts again
 * at once instead of at its next poll.
 *
 * <p>{@link #wakeOne} wakes the longest-registered waiter that is listening, so that one release sends one waiter of
 * this backend to the store instead of all of them (a herd the store answers with one grant and many refusals); the
 * others keep their own poll timers. {@link #wake} wakes them all, for a backend that cannot tell which one can win.
 *
 * <p>Each waiter counts its wake-ups ({@link Waiter#signals()}): an acquisition that reads the count before a request
 * and finds it changed after the answer missed a release while the request was in flight, and attempts again at once.
 */
public final class WakeUps {

    private static final Waiter[] NONE = {};

    /**
     * Key to its waiters in the order they registered, each array replaced, never changed, inside the map's {@code
     * compute}: a key has one waiter or a few, and a one-element array costs a registration far less than a sorted
     * concurrent set. A wake-up goes through the array it read, as a set's iterator would go through the set weakly
     * consistent: a waiter closed meanwhile is still woken (and answers that it does not listen).
     */
    private final ConcurrentHashMap<String, Waiter[]> waiters = new ConcurrentHashMap<>();

    private final AtomicLong registrations = new AtomicLong();

    /**
     * Registers a waiter of {@code key}; close it when done waiting.
     *
     * @param onWake runs on the thread that wakes the waiter, must not block, and answers whether the wake-up set the
     *     waiter going (false when it is not listening now: backing off, or done), so that {@link #wakeOne} can try the
     *     next waiter instead
     */
    public Waiter register(String key, BooleanSupplier onWake) {
        Waiter waiter = new Waiter(key, onWake, registrations.incrementAndGet());
        waiters.compute(key, (k, registered) -> with(registered == null ? NONE : registered, waiter));
        return waiter;
    }

    /** {@code registered} and {@code waiter}, in the order of registration (a later one may have come first). */
    private static Waiter[] with(Waiter[] registered, Waiter waiter) {
        int at = registered.length;
        while (at > 0 && registered[at - 1].order > waiter.order) {
            at--;
        }
        Waiter[] result = new Waiter[registered.length + 1];
        System.arraycopy(registered, 0, result, 0, at);
        result[at] = waiter;
        System.arraycopy(registered, at, result, at + 1, registered.length - at);
        return result;
    }

    /** {@code registered} without {@code waiter}; null when none is left. */
    private static Waiter[] without(Waiter[] registered, Waiter waiter) {
        int at = 0;
        while (at < registered.length && registered[at] != waiter) {
            at++;
        }
        if (at == registered.length) {
            return registered;
        }
        if (registered.length == 1) {
            return null;
        }
        Waiter[] result = new Waiter[registered.length - 1];
        System.arraycopy(registered, 0, result, 0, at);
        System.arraycopy(registered, at + 1, result, at, result.length - at);
        return result;
    }

    /** Wakes every waiter of {@code key} registered here. */
    public void wake(String key) {
        Waiter[] registered = waiters.get(key);
        if (registered != null) {
            for (Waiter waiter : registered) {
                waiter.wake();
            }
        }
    }

    /**
     * Wakes the longest-registered waiter of {@code key} that is listening; the others are not told. Returns whether
     * one was woken.
     */
    public boolean wakeOne(String key) {
        Waiter[] registered = waiters.get(key);
        if (registered != null) {
            for (Waiter waiter : registered) {
                if (waiter.wake()) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether {@code key} has a waiter registered now: a backend that hears of releases of every key (a store's
     * release messages) skips, without further work, those nobody here waits on.
     */
    public boolean isWaitedOn(String key) {
        return waiters.containsKey(key);
    }

    /** How many keys have waiters registered now (none once every waiter has closed). */
    public int keysWaitedOn() {
        return waiters.size();
    }

    /** One registered waiter. */
    public final class Waiter implements AutoCloseable {
        private final String key;
        private final BooleanSupplier onWake;
        private final long order;
        private final AtomicInteger signals = new AtomicInteger();

        private Waiter(String key, BooleanSupplier onWake, long order) {
            this.key = key;
            this.onWake = onWake;
            this.order = order;
        }

        /** How many times this waiter was woken since it registered. */
        public int signals() {
            return signals.get();
        }

        /** Wakes this waiter alone (counted like a release of its key); whether it was listening. */
        boolean wake() {
            signals.incrementAndGet();
            return onWake.getAsBoolean();
        }

        /** Unregisters; a key without waiters leaves the registry. */
        @Override
        public void close() {
            waiters.computeIfPresent(key, (k, registered) -> without(registered, this));
        }
    }
}
