package io.distlock.internal;

import io.distlock.LockConfigurationException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parsing of duration options ({@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}, ISO-8601 {@code PT10S}); the same
 * short form in messages is {@link io.distlock.spi.DurationText}.
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
}
