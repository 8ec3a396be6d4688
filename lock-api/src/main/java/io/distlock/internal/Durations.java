package io.distlock.internal;

import io.distlock.LockConfigurationException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as people type them: parsing of duration options ({@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h},
 * ISO-8601 {@code PT10S}) and the same short form in messages ({@code 10s}, not {@code PT10S}).
 */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h)");

    private Durations() {}

    /**
     * Parses the value of option {@code name}.
     *
     * @throws LockConfigurationException naming the option if the value is malformed or not positive
     */
    public static Duration parseOption(String name, String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        Duration d;
        Matcher m = SHORT.matcher(v);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            };
        } else {
            try {
                d = Duration.parse(value.trim());
            } catch (DateTimeParseException e) {
                throw new LockConfigurationException("Option '" + name + "' must be a duration such as 500ms, 10s, 2m,"
                        + " 1h or PT10S, got '" + value + "'");
            }
        }
        if (d.isZero() || d.isNegative()) {
            throw new LockConfigurationException("Option '" + name + "' must be positive, got '" + value + "'");
        }
        return d;
    }

    /**
     * The duration as a person writes it, in the units of the option syntax: {@code 10s}, {@code 500ms}, {@code
     * 1500ms}, {@code 2m}, {@code 1h30m}; below a millisecond {@code us} or {@code ns}.
     */
    public static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
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
