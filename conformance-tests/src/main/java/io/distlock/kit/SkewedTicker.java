package io.distlock.kit;

import io.distlock.Ticker;
import java.time.Duration;

/**
 * A client clock that can be made wrong: it runs at {@link #rate(double)} times the real monotonic clock and {@link
 * #jump(Duration) jumps} by a given amount, forwards or back. Given to a locker with {@link
 * io.distlock.RemoteLockerBuilder#ticker}, it is the clock the locker and its backend measure leases and deadlines by.
 */
final class SkewedTicker implements Ticker {

    private long realBase = System.nanoTime();
    private long skewedBase = realBase;
    private double rate = 1.0;

    @Override
    public synchronized long read() {
        return skewedBase + (long) ((System.nanoTime() - realBase) * rate);
    }

    /** From now on runs at {@code rate} times real time (0.5: half as fast). */
    synchronized void rate(double newRate) {
        if (!(newRate > 0)) {
            throw new IllegalArgumentException("rate " + newRate);
        }
        rebase();
        rate = newRate;
    }

    /** Jumps by {@code by}: forwards if positive, back if negative. */
    synchronized void jump(Duration by) {
        rebase();
        skewedBase += by.toNanos();
    }

    private void rebase() {
        long now = System.nanoTime();
        skewedBase = skewedBase + (long) ((now - realBase) * rate);
        realBase = now;
    }
}
