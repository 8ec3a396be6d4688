package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLockers;
import org.junit.jupiter.api.Test;

class ShownTextTest {

    @Test
    void of_showsShortTextWhole() {
        assertThat(ShownText.of("")).isEmpty();
        assertThat(ShownText.of("fair")).isEqualTo("fair");
        assertThat(ShownText.of("x".repeat(ShownText.MAX_CHARS))).isEqualTo("x".repeat(40));
    }

    @Test
    void of_cutsLongTextAfterFortyCharacters() {
        assertThat(ShownText.of("y".repeat(41))).isEqualTo("y".repeat(40) + "...");
        assertThat(ShownText.of("z".repeat(1_000_000))).hasSize(43);
    }

    @Test
    void of_escapesControlCharacters_soAMessageStaysOneLine() {
        assertThat(ShownText.of("a\nb\tc\u0000d\u007f")).isEqualTo("a\\u000ab\\u0009c\\u0000d\\u007f");
        assertThat(ShownText.of("\r\n" + "q".repeat(50))).isEqualTo("\\u000d\\u000a" + "q".repeat(38) + "...");
    }

    @Test
    void of_neverCutsASurrogatePairInHalf() {
        String clef = "\uD834\uDD1E"; // one character outside the BMP, two chars
        String text = "m".repeat(39) + clef + "tail";

        assertThat(ShownText.of(text)).isEqualTo("m".repeat(39) + "...");
        assertThat(ShownText.of("m".repeat(38) + clef)).isEqualTo("m".repeat(38) + clef);
    }

    @Test
    void optionMessages_showTheRefusedValueShort() {
        String huge = "12\n" + "9".repeat(100_000);
        for (String option : new String[] {"ttl", "connectTimeout"}) {
            assertThatThrownBy(() -> RemoteLockers.builder()
                            .uri("memory://shown")
                            .option(option, huge)
                            .build())
                    .isInstanceOf(LockConfigurationException.class)
                    .hasMessage(
                            "Option '" + option + "' must be a duration such as 500ms, 10s, 2m, 1h or PT10S, got '12"
                                    + "\\u000a" + "9".repeat(37) + "...'");
        }
        assertThatThrownBy(() -> DurationText.parse(huge))
                .hasMessage(
                        "Not a duration such as 500ms, 10s, 2m, 1h30m or PT10S: '12\\u000a" + "9".repeat(37) + "...'");
    }
}
