package io.distlock;

/**
 * A monotonic source of nanoseconds: the time base of deadlines and lease validity. Inject a controllable one (see
 * {@link RemoteLockerBuilder#ticker}) to test lease expiry without sleeping.
 */
@FunctionalInterface
public interface Ticker {

    /** Nanoseconds from an arbitrary fixed origin; only differences are meaningful. Never decreases. */
    long read();

    /** The ticker of {@link System#nanoTime()}. */
    static Ticker system() {
        return System::nanoTime;
    }
}
