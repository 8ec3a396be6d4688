package io.distlock.spi;

import java.time.Duration;

/**
 * Durations in messages as people type them in options ({@code 10s}, not {@code PT10S}): for every message of the
 * locker and of backends that names a timeout or a lease time.
 */
public final class DurationText {

    private DurationText() {}

    /**
     * The duration as a person writes it, in the units of the option syntax: {@code 10s}, {@code 500ms}, {@code
     * 1500ms}, {@code 2m}, {@code 1h30m}; below a millisecond {@code us} or {@code ns}.
     */
    public static String of(Duration d) {
        if (d.isNegative()) {
            return "-" + of(d.negated());
        }
        if (d.isZero()) {
            return "0s";
        }
        long millis = d.toMillis();
        int nanos = d.toNanosPart();
        if (millis == 0) {
            return nanos % 1000 == 0 ? (nanos / 1000) + "us" : nanos + "ns";
        }
        if (nanos != 0 && d.getSeconds() < 60) {
            return millis + "ms";
        }
        StringBuilder out = new StringBuilder();
        if (d.toHours() > 0) {
            out.append(d.toHours()).append('h');
        }
        if (d.toMinutesPart() > 0) {
            out.append(d.toMinutesPart()).append('m');
        }
        if (d.toSecondsPart() > 0 || d.toMillisPart() > 0) {
            out.append(d.toSecondsPart());
            if (d.toMillisPart() > 0) {
                out.append('.')
                        .append(String.format(java.util.Locale.ROOT, "%03d", d.toMillisPart())
                                .replaceAll("0+$", ""));
            }
            out.append('s');
        }
        return out.toString();
    }
}
