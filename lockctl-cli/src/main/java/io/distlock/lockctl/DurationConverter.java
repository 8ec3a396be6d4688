package io.distlock.lockctl;

import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads durations the way lock URIs do: {@code 500ms}, {@code 10s}, {@code 2m}, {@code PT10S}; also zero ({@code 0},
 * {@code 0ms}), which options such as {@code --hold} and {@code --wait} accept.
 */
final class DurationConverter implements ITypeConverter<Duration> {

    private static final Pattern ZERO = Pattern.compile("0+\\s*(ms|s|m|h)?");

    @Override
    public Duration convert(String value) {
        if (ZERO.matcher(value.trim()).matches()) {
            return Duration.ZERO;
        }
        try {
            return DurationText.parseOption("duration", value);
        } catch (RuntimeException e) {
            throw new TypeConversionException(
                    "'" + value + "' is not a duration; expected e.g. 0, 500ms, 10s, 2m, 1h or PT10S");
        }
    }
}
