package io.distlock.spi;

import io.distlock.Ticker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/**
 * The point in time until which a caller is willing to wait, measured on a {@link Ticker}. Immutable.
 */
public final class Deadline {

    private final Ticker ticker;
    private final Optional<Duration> maxWait;
    private final long endNanos;

    private Deadline(Ticker ticker, Optional<Duration> maxWait, long endNanos) {
        this.ticker = ticker;
        this.maxWait = maxWait;
        this.endNanos = endNanos;
    }

    /** A deadline {@code maxWait} from now on {@code ticker}. */
    public static Deadline after(Duration maxWait, Ticker ticker) {
        Objects.requireNonNull(maxWait, "maxWait");
        Objects.requireNonNull(ticker, "ticker");
        long now = ticker.read();
        return new Deadline(ticker, Optional.of(maxWait), saturatedAdd(now, saturatedNanos(maxWait)));
    }

    /** No deadline: wait as long as it takes. */
    public static Deadline unbounded(Ticker ticker) {
        Objects.requireNonNull(ticker, "ticker");
        return new Deadline(ticker, Optional.empty(), 0L);
    }

    /** The wait this deadline was made for; empty when unbounded. */
    public Optional<Duration> maxWait() {
        return maxWait;
    }

    /** The ticker this deadline is measured on: for a deadline of its own that a wait sets beside this one. */
    public Ticker ticker() {
        return ticker;
    }

    /** Whether this deadline has an end. */
    public boolean isBounded() {
        return maxWait.isPresent();
    }

    /** Whether the deadline has passed. An unbounded deadline never passes. */
    public boolean hasPassed() {
        return remainingNanos() <= 0;
    }

    /**
     * Nanoseconds left, zero or less once passed. An unbounded deadline saturates at {@link Long#MAX_VALUE}, which
     * {@link java.util.concurrent.locks.Condition#awaitNanos} and {@code Future.get} treat as waiting without end.
     */
    public long remainingNanos() {
        if (maxWait.isEmpty()) {
            return Long.MAX_VALUE;
        }
        return endNanos - ticker.read();
    }

    /** Nanoseconds left, but at most {@code capNanos}: for waits that must wake up to re-check something. */
    public long remainingNanos(long capNanos) {
        return Math.min(remainingNanos(), capNanos);
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    @Override
    public String toString() {
        return maxWait.map(d -> "Deadline[" + DurationText.of(d) + ", "
                        + DurationText.of(shown(Duration.ofNanos(Math.max(0, remainingNanos())))) + " left]")
                .orElse("Deadline[unbounded]");
    }

    /** What is left, as a person reads it: to the millisecond from a millisecond on. */
    private static Duration shown(Duration left) {
        return left.toMillis() > 0 ? left.truncatedTo(ChronoUnit.MILLIS) : left;
    }
}
