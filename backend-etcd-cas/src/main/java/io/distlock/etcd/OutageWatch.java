package io.distlock.etcd;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Ends the waits parked on a watch once etcd has not answered for the outage limit ({@code connectTimeout}), deadline
 * or not, with a {@link LockBackendException} naming the endpoints: jetcd re-creates a watch through an outage without
 * a word, so a parked wait would otherwise outlast any outage. While waits are parked, it looks every quarter of the
 * limit at when etcd last answered any request of the backend; after half the limit of silence it sends a probe (an
 * empty transaction), so a quiet wait costs a request only when nothing else has been answered meanwhile.
 */
final class OutageWatch {

    private final EtcdCalls calls;
    private final Duration limit;
    private final Set<EtcdAcquisition> parked = ConcurrentHashMap.newKeySet();
    private final long periodNanos;
    /** Whether the ticks run; taken without a lock, as waits park from etcd's callback threads. */
    private final AtomicBoolean running = new AtomicBoolean();

    private volatile ScheduledFuture<?> ticks;
    private volatile long lastTickNanos;

    OutageWatch(EtcdCalls calls, Duration limit) {
        this.calls = calls;
        this.limit = limit;
        this.periodNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(50), limit.toNanos() / 4);
    }

    /** {@code attempt} waits on a watch from now on, until {@link #resumed}. */
    void parked(EtcdAcquisition attempt) {
        parked.add(attempt);
        start();
    }

    private void start() {
        if (running.compareAndSet(false, true)) {
            lastTickNanos = calls.ticker().read();
            ticks = calls.timer().scheduleWithFixedDelay(this::tick, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** {@code attempt} no longer waits on a watch. */
    void resumed(EtcdAcquisition attempt) {
        parked.remove(attempt);
    }

    private void tick() {
        if (parked.isEmpty()) {
            ScheduledFuture<?> own = ticks;
            running.set(false);
            own.cancel(false);
            if (!parked.isEmpty()) {
                start(); // a wait parked meanwhile
            }
            return;
        }
        long now = calls.ticker().read();
        boolean paused = now - lastTickNanos > 2 * periodNanos;
        lastTickNanos = now;
        long silent = now - calls.lastAnswerNanos();
        if (paused) {
            probe(); // this process stood still (a long GC pause, SIGSTOP): ask etcd before blaming it
        } else if (silent >= limit.toNanos()) {
            LockBackendException outage =
                    new LockBackendException("etcd at " + calls.endpoints() + " has not answered for "
                            + DurationText.of(limit) + " (option connectTimeout) while waiting for the lock");
            for (EtcdAcquisition attempt : parked) {
                parked.remove(attempt);
                attempt.storeUnreachable(outage);
            }
        } else if (silent >= limit.toNanos() / 2) {
            probe();
        }
    }

    private void probe() {
        calls.txn("probing etcd while waits are parked", txn -> txn, Deadline.after(limit, calls.ticker()))
                .exceptionally(e -> null);
    }
}
