package io.distlock.kit;

import io.distlock.RemoteLock;

/**
 * Watches what a holder believes: polls {@link RemoteLock#isHeld()} every millisecond on a thread of its own and keeps
 * the last instant ({@link System#nanoTime()}) it answered true, until it answers false or the watch is closed.
 */
final class Belief implements AutoCloseable {

    private final Thread poller;
    private volatile long lastHeldNanos;
    private volatile boolean ended;

    private Belief(RemoteLock lock) {
        lastHeldNanos = System.nanoTime();
        poller = new Thread(
                () -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        long now = System.nanoTime();
                        if (!lock.isHeld()) {
                            ended = true;
                            return;
                        }
                        lastHeldNanos = now;
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                },
                "kit-belief-" + lock.key());
        poller.setDaemon(true);
        poller.start();
    }

    /** Starts watching {@code lock}. */
    static Belief of(RemoteLock lock) {
        return new Belief(lock);
    }

    /** The last instant the holder said it held the lock. */
    long lastHeldNanos() {
        return lastHeldNanos;
    }

    /** Whether the holder has said it no longer holds the lock. */
    boolean ended() {
        return ended;
    }

    @Override
    public void close() {
        poller.interrupt();
    }
}
