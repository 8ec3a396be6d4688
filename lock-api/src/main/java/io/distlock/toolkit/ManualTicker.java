package io.distlock.toolkit;

import io.distlock.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when told: for tests of lease expiry and deadlines without sleeping. Thread-safe.
 */
public final class ManualTicker implements Ticker {

    private final AtomicLong nanos = new AtomicLong();

    @Override
    public long read() {
        return nanos.get();
    }

    /** Moves the ticker forward by {@code amount}. */
    public void advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("A ticker never goes back; got " + DurationText.of(amount));
        }
        nanos.addAndGet(amount.toNanos());
    }
}
