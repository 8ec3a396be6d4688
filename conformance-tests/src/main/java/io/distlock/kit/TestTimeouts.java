package io.distlock.kit;

import java.time.Duration;

/**
 * Every timeout of the kit and the fixtures goes through here, scaled by one system property, {@value #FACTOR} (e.g.
 * {@code -Ddistlock.test.timeout.factor=3} on a slow machine). Like Curator's {@code Timing}.
 */
public final class TestTimeouts {

    /** The system property holding the scale factor (a positive decimal, default 1). */
    public static final String FACTOR = "distlock.test.timeout.factor";

    private TestTimeouts() {}

    /** The scale factor. */
    public static double factor() {
        String raw = System.getProperty(FACTOR, "1");
        try {
            double f = Double.parseDouble(raw.trim());
            if (f > 0) {
                return f;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException("-D" + FACTOR + " must be a positive number, got '" + raw + "'");
    }

    /** {@code base} scaled by the factor. */
    public static Duration scaled(Duration base) {
        return Duration.ofNanos((long) (base.toNanos() * factor()));
    }
}
