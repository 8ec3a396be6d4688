package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** One syntax both ways: what {@link DurationText#of} prints, {@link DurationText#parse} reads back. */
class DurationTextTest {

    private static final List<Duration> EDGES = List.of(
            Duration.ZERO,
            Duration.ofNanos(1),
            Duration.ofNanos(999),
            Duration.ofNanos(1_000),
            Duration.ofNanos(1_500),
            Duration.ofNanos(999_999),
            Duration.ofMillis(1),
            Duration.ofNanos(1_500_000),
            Duration.ofNanos(1_500_001),
            Duration.ofMillis(50),
            Duration.ofMillis(1500),
            Duration.ofSeconds(1),
            Duration.ofSeconds(10),
            Duration.ofSeconds(59, 999_999_999),
            Duration.ofSeconds(60),
            Duration.ofSeconds(61),
            Duration.ofMillis(61_500),
            Duration.ofSeconds(60, 1),
            Duration.ofSeconds(3_599, 999_000),
            Duration.ofMinutes(90),
            Duration.ofHours(1),
            Duration.ofHours(24),
            Duration.ofDays(2).plusHours(3).plusMinutes(4).plusSeconds(5).plusNanos(6_007_008),
            Duration.ofDays(365),
            Duration.ofDays(365).plusNanos(1));

    @Test
    void parse_ofWhatOfPrints_givesTheSameDuration_fromNanosecondsToDays() {
        List<Duration> durations = new ArrayList<>(EDGES);
        SplittableRandom random = new SplittableRandom(43);
        ChronoUnit[] precisions = {
            ChronoUnit.NANOS,
            ChronoUnit.MICROS,
            ChronoUnit.MILLIS,
            ChronoUnit.SECONDS,
            ChronoUnit.MINUTES,
            ChronoUnit.HOURS
        };
        for (int i = 0; i < 5_000; i++) {
            // magnitudes spread evenly over nanoseconds to 400 days, each cut to a random precision
            long bound = (long) Math.pow(
                    10, random.nextDouble(0, Math.log10(Duration.ofDays(400).toNanos())));
            Duration d = Duration.ofNanos(1 + random.nextLong(Math.max(1, bound)))
                    .truncatedTo(precisions[random.nextInt(precisions.length)]);
            durations.add(d);
            durations.add(d.negated());
        }
        for (Duration d : durations) {
            String text = DurationText.of(d);
            assertThat(DurationText.parse(text)).as("%s printed as %s", d, text).isEqualTo(d);
            if (d.compareTo(Duration.ZERO) > 0) {
                assertThat(DurationText.parseOption("ttl", text)).as(text).isEqualTo(d);
            }
        }
    }

    @Test
    void of_writesDurationsAsTyped() {
        assertThat(DurationText.of(Duration.ofSeconds(3))).isEqualTo("3s");
        assertThat(DurationText.of(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(DurationText.of(Duration.ofMinutes(90))).isEqualTo("1h30m");
        assertThat(DurationText.of(Duration.ofMillis(61_500))).isEqualTo("1m1.5s");
        assertThat(DurationText.of(Duration.ofNanos(1_500))).isEqualTo("1500ns");
        assertThat(DurationText.of(Duration.ofNanos(1_500_000))).isEqualTo("1500us");
        assertThat(DurationText.of(Duration.ofSeconds(60, 1))).isEqualTo("1m0.000000001s");
        assertThat(DurationText.of(Duration.ofDays(2))).isEqualTo("48h");
        assertThat(DurationText.of(Duration.ZERO)).isEqualTo("0s");
        assertThat(DurationText.of(Duration.ofMillis(-50))).isEqualTo("-50ms");
    }

    @Test
    void parse_readsTheDocumentedForms() {
        assertThat(DurationText.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationText.parse("10 s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(DurationText.parse(" 2M ")).isEqualTo(Duration.ofMinutes(2));
        assertThat(DurationText.parse("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(DurationText.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationText.parse("0.25h")).isEqualTo(Duration.ofMinutes(15));
        assertThat(DurationText.parse("1s500ms")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationText.parse("250us")).isEqualTo(Duration.ofNanos(250_000));
        assertThat(DurationText.parse("7ns")).isEqualTo(Duration.ofNanos(7));
        assertThat(DurationText.parse("PT1M30S")).isEqualTo(Duration.ofSeconds(90));
    }

    @Test
    void parse_refusesWhatIsNoDuration() {
        for (String text : List.of("", "soon", "1m1h", "1s1s", "1.5ns", "1.0000000001s", "1d", "s", "10", "1h 30m")) {
            assertThatThrownBy(() -> DurationText.parse(text)).as(text).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void parseOption_refusesASignAndNonPositiveValues_namingTheOption() {
        assertThatThrownBy(() -> DurationText.parseOption("courtesy", "-2ms"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessage("Option 'courtesy' must be a duration such as 500ms, 10s, 2m, 1h or PT10S, got '-2ms'");
        assertThatThrownBy(() -> DurationText.parseOption("ttl", "0s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessage("Option 'ttl' must be positive, got '0s'");
        assertThatThrownBy(() -> DurationText.parseOption("ttl", "-PT1S"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessage("Option 'ttl' must be positive, got '-PT1S'");
    }
}
