package io.distlock.cassandra;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Wakes the waiters of a key inside one backend when a holder of the same backend releases it, so that they poll the
 * store at once instead of at their next interval. Cassandra tells nobody about a release; across processes waiters
 * still rely on polling.
 */
final class LocalWakeUps {

    private final ConcurrentHashMap<String, Signal> signals = new ConcurrentHashMap<>();

    /** Registers a waiter of {@code key}; close it when done waiting. */
    Waiter register(String key) {
        Signal signal = signals.compute(key, (k, s) -> {
            Signal result = s == null ? new Signal() : s;
            result.waiters++;
            return result;
        });
        return new Waiter(key, signal);
    }

    /** Wakes every waiter of {@code key} in this backend. */
    void signal(String key) {
        Signal signal = signals.get(key);
        if (signal != null) {
            synchronized (signal) {
                signal.generation++;
                signal.notifyAll();
            }
        }
    }

    /** How many keys have waiters registered (for tests: none after every waiter left). */
    int keysWithWaiters() {
        return signals.size();
    }

    private static final class Signal {
        int waiters; // guarded by the map's compute
        long generation; // guarded by this
    }

    /** One registered waiter. */
    final class Waiter implements AutoCloseable {
        private final String key;
        private final Signal signal;
        private long seen;

        private Waiter(String key, Signal signal) {
            this.key = key;
            this.signal = signal;
            synchronized (signal) {
                this.seen = signal.generation;
            }
        }

        /** Waits up to {@code nanos}, or less if a holder of this backend released the key since the last wait. */
        void await(long nanos) throws InterruptedException {
            synchronized (signal) {
                if (signal.generation == seen && nanos > 0) {
                    TimeUnit.NANOSECONDS.timedWait(signal, nanos);
                }
                seen = signal.generation;
            }
        }

        @Override
        public void close() {
            signals.computeIfPresent(key, (k, s) -> --s.waiters == 0 ? null : s);
        }
    }
}
