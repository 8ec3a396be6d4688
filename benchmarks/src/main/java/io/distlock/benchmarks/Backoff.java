package io.distlock.benchmarks;

import java.util.concurrent.locks.LockSupport;

/**
 * How the raw-store floors wait for a busy key: they have no queue and no wake-up, so they try again after a short
 * pause. Their contended figures measure that polling, which is what a hand-written lock on the raw store does.
 */
final class Backoff {

    /** The pause between two attempts on a busy key. */
    static final long PAUSE_NANOS = 1_000_000;

    private Backoff() {}

    static void pause() throws InterruptedException {
        LockSupport.parkNanos(PAUSE_NANOS);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }
}
