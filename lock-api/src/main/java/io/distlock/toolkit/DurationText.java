package io.distlock.toolkit;

import io.distlock.LockConfigurationException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as people type them in options and read them in messages ({@code 10s}, not {@code PT10S}): one syntax
 * both ways, so that every duration {@link #of} prints, {@link #parse} reads back to the same value.
 *
 * <p>What is accepted, ignoring case and surrounding blanks:
 *
 * <ul>
 *   <li>one or more terms, each a number and a unit, the units in decreasing order and each at most once: {@code h},
 *       {@code m}, {@code s}, {@code ms}, {@code us}, {@code ns}; e.g. {@code 500ms}, {@code 10s}, {@code 2m}, {@code
 *       1h30m}, {@code 1m1.5s}, {@code 250us};
 *   <li>a number of at most 12 digits, with a fraction of at most 9 digits ({@code 1.5s}, {@code 0.25h}) as long as
 *       the term is a whole number of nanoseconds; blanks may stand between a number and its unit ({@code 10 s});
 *   <li>ISO-8601, as {@link Duration#parse} reads it: {@code PT10S}, {@code PT1M30S}.
 * </ul>
 *
 * <p>For the messages of the locker and of backends that name a timeout or a lease time.
 */
public final class DurationText {

    private static final String TERM = "(\\d{1,12}(?:\\.\\d{1,9})?)\\s*(ns|us|ms|h|m|s)";
    private static final Pattern TERMS = Pattern.compile("(?:" + TERM + ")+");
    private static final Pattern ONE_TERM = Pattern.compile(TERM);
    private static final String[] UNITS = {"h", "m", "s", "ms", "us", "ns"};
    private static final long[] UNIT_NANOS = {
        3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L, 1L
    };

    private DurationText() {}

    /**
     * The duration as a person writes it, in the units of the option syntax: {@code 10s}, {@code 500ms}, {@code
     * 1500ms}, {@code 2m}, {@code 1h30m}, {@code 1m1.5s}; under a minute a fraction of a second is written in the
     * largest unit that holds it whole ({@code 1500ms}, {@code 1500us}, {@code 1500001ns}); zero is {@code 0s}, and a
     * negative duration is the positive one after a {@code -}. Exact: {@link #parse} gives {@code d} back.
     */
    public static String of(Duration d) {
        if (d.isNegative()) {
            return "-" + of(d.negated());
        }
        if (d.isZero()) {
            return "0s";
        }
        int nanos = d.toNanosPart();
        if (nanos != 0 && d.getSeconds() < 60) {
            long total = d.toNanos();
            if (total % 1_000_000 == 0) {
                return total / 1_000_000 + "ms";
            }
            return total % 1_000 == 0 ? total / 1_000 + "us" : total + "ns";
        }
        StringBuilder out = new StringBuilder();
        if (d.toHours() > 0) {
            out.append(d.toHours()).append('h');
        }
        if (d.toMinutesPart() > 0) {
            out.append(d.toMinutesPart()).append('m');
        }
        if (d.toSecondsPart() > 0 || nanos > 0) {
            out.append(d.toSecondsPart());
            if (nanos > 0) {
                out.append('.').append(String.format(Locale.ROOT, "%09d", nanos).replaceAll("0+$", ""));
            }
            out.append('s');
        }
        return out.toString();
    }

    /**
     * Reads a duration written as the class describes, or as {@link #of} writes it (a {@code -} before the short form
     * included).
     *
     * @throws IllegalArgumentException if {@code text} is neither
     */
    public static Duration parse(String text) {
        String v = text.trim();
        boolean negative = v.startsWith("-") && !v.startsWith("-P") && !v.startsWith("-p");
        Optional<Duration> shortForm = parseShort(negative ? v.substring(1) : v);
        if (shortForm.isPresent()) {
            return negative ? shortForm.get().negated() : shortForm.get();
        }
        try {
            return Duration.parse(v);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "Not a duration such as 500ms, 10s, 2m, 1h30m or PT10S: '" + ShownText.of(text) + "'");
        }
    }

    /**
     * Reads the value of option {@code name}: a positive duration as the class describes (no sign before the short
     * form).
     *
     * @throws LockConfigurationException naming the option if the value is malformed or not positive
     */
    public static Duration parseOption(String name, String value) {
        Duration d = parseShort(value.trim()).orElseGet(() -> {
            try {
                return Duration.parse(value.trim());
            } catch (DateTimeParseException e) {
                throw new LockConfigurationException("Option '" + name + "' must be a duration such as 500ms, 10s, 2m,"
                        + " 1h or PT10S, got '" + ShownText.of(value) + "'");
            }
        });
        if (d.isZero() || d.isNegative()) {
            throw new LockConfigurationException(
                    "Option '" + name + "' must be positive, got '" + ShownText.of(value) + "'");
        }
        return d;
    }

    /** The short form, unsigned; empty if {@code v} is not one. */
    private static Optional<Duration> parseShort(String v) {
        String text = v.toLowerCase(Locale.ROOT);
        if (!TERMS.matcher(text).matches()) {
            return Optional.empty();
        }
        Matcher term = ONE_TERM.matcher(text);
        BigDecimal nanos = BigDecimal.ZERO;
        int lastUnit = -1;
        while (term.find()) {
            int unit = Arrays.asList(UNITS).indexOf(term.group(2));
            if (unit <= lastUnit) {
                return Optional.empty(); // units out of order, or one twice
            }
            lastUnit = unit;
            nanos = nanos.add(new BigDecimal(term.group(1)).multiply(BigDecimal.valueOf(UNIT_NANOS[unit])));
        }
        try {
            BigDecimal[] secondsAndNanos = nanos.divideAndRemainder(BigDecimal.valueOf(1_000_000_000L));
            return Optional.of(
                    Duration.ofSeconds(secondsAndNanos[0].longValueExact(), secondsAndNanos[1].longValueExact()));
        } catch (ArithmeticException finerThanNanos) {
            return Optional.empty();
        }
    }
}
