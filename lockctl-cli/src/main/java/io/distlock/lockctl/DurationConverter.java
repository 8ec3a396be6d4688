package io.distlock.lockctl;

import io.distlock.internal.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;

/** Reads durations the way lock URIs do: {@code 500ms}, {@code 10s}, {@code 2m}, {@code PT10S}. */
final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
        return Durations.parseOption("duration", value);
    }
}
