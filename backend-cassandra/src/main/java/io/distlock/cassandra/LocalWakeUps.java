package io.distlock.cassandra;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Wakes the waiters of a key inside one backend when a holder of the same backend releases it, so that they poll the
 * store at once instead of at their next interval. Cassandra tells nobody about a release; across processes waiters
 * still rely on polling.
 */
final class LocalWakeUps {

    private final ConcurrentHashMap<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();

    /**
     * Registers a waiter of {@code key}; close it when done waiting. {@code onWake} runs on the releasing thread and
     * must not block.
     */
    Waiter register(String key, Runnable onWake) {
        Waiter waiter = new Waiter(key, onWake);
        waiters.compute(key, (k, set) -> {
            Set<Waiter> result = set == null ? ConcurrentHashMap.newKeySet() : set;
            result.add(waiter);
            return result;
        });
        return waiter;
    }

    /** Wakes every waiter of {@code key} in this backend. */
    void signal(String key) {
        Set<Waiter> set = waiters.get(key);
        if (set != null) {
            for (Waiter waiter : set) {
                waiter.wake();
            }
        }
    }

    /** How many keys have waiters registered (for tests: none after every waiter left). */
    int keysWithWaiters() {
        return waiters.size();
    }

    /** One registered waiter. */
    final class Waiter implements AutoCloseable {
        private final String key;
        private final Runnable onWake;
        private volatile int signals;

        private Waiter(String key, Runnable onWake) {
            this.key = key;
            this.onWake = onWake;
        }

        /**
         * How many times this waiter was woken: a waiter that reads it before a poll and finds it changed after the
         * poll missed a release while its request was in flight.
         */
        int signals() {
            return signals;
        }

        private void wake() {
            synchronized (this) {
                signals++;
            }
            onWake.run();
        }

        @Override
        public void close() {
            waiters.computeIfPresent(key, (k, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
