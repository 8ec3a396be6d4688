package io.distlock.spi;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The waiters of keys inside one backend, woken when the backend learns that a key was released: by a holder in the
 * same backend, or by a message from the store. A {@link PollingAcquisition} registers here so that it attempts again
 * at once instead of at its next poll.
 *
 * <p>Each waiter counts its wake-ups ({@link Waiter#signals()}): an acquisition that reads the count before a request
 * and finds it changed after the answer missed a release while the request was in flight, and attempts again at once.
 */
public final class WakeUps {

    private final ConcurrentHashMap<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();

    /**
     * Registers a waiter of {@code key}; close it when done waiting.
     *
     * @param onWake runs on the thread that calls {@link #wake}, and must not block
     */
    public Waiter register(String key, Runnable onWake) {
        Waiter waiter = new Waiter(key, onWake);
        waiters.compute(key, (k, set) -> {
            Set<Waiter> result = set == null ? ConcurrentHashMap.newKeySet() : set;
            result.add(waiter); // inside compute: a closing waiter cannot drop the set meanwhile
            return result;
        });
        return waiter;
    }

    /** Wakes every waiter of {@code key} registered here. */
    public void wake(String key) {
        Set<Waiter> set = waiters.get(key);
        if (set != null) {
            for (Waiter waiter : set) {
                waiter.wake();
            }
        }
    }

    /** How many keys have waiters registered now (none once every waiter has closed). */
    public int keysWaitedOn() {
        return waiters.size();
    }

    /** One registered waiter. */
    public final class Waiter implements AutoCloseable {
        private final String key;
        private final Runnable onWake;
        private final AtomicInteger signals = new AtomicInteger();

        private Waiter(String key, Runnable onWake) {
            this.key = key;
            this.onWake = onWake;
        }

        /** How many times this waiter was woken since it registered. */
        public int signals() {
            return signals.get();
        }

        /** Wakes this waiter alone (counted like a release of its key). */
        void wake() {
            signals.incrementAndGet();
            onWake.run();
        }

        /** Unregisters; a key without waiters leaves the registry. */
        @Override
        public void close() {
            waiters.computeIfPresent(key, (k, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
