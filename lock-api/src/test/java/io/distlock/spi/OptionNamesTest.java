package io.distlock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.Ticker;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Option names are matched ignoring case (Spring Boot lower-cases those it takes from environment variables). */
class OptionNamesTest {

    @TempDir
    Path dir;

    private static BackendConfig config(Map<String, String> options) {
        return new BackendConfig(
                URI.create("test://h:1/x"),
                options,
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                Ticker.system(),
                Clock.systemUTC());
    }

    @Test
    void option_spelledInAnotherCase_isRead_andNotReportedUnknown() throws Exception {
        Path file = Files.writeString(dir.resolve("pw"), "from-the-file\n");
        BackendConfig config = config(Map.of("passwordfile", file.toString(), "SESSIONTIMEOUT", "15s"));
        assertThat(config.secretOption("password").orElseThrow().reveal()).isEqualTo("from-the-file");
        assertThat(config.durationOption("sessionTimeout", Duration.ZERO)).isEqualTo(Duration.ofSeconds(15));
        assertThat(config.unreadOptions()).isEmpty();
        config.rejectUnknownOptions("test");
    }

    @Test
    void option_givenTwiceInTwoCases_isRefused_namingBoth() {
        BackendConfig config = config(Map.of("sessionTimeout", "15s", "sessiontimeout", "20s"));
        assertThatThrownBy(() -> config.durationOption("sessionTimeout", Duration.ZERO))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("'sessionTimeout' is given more than once")
                .hasMessageContaining("sessiontimeout");
    }

    @Test
    void unknownOption_inAnyCase_isStillReported() {
        BackendConfig config = config(Map.of("sesionTimeout", "15s"));
        config.durationOption("sessionTimeout", Duration.ZERO);
        assertThatThrownBy(() -> config.rejectUnknownOptions("test"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("Unknown option [sesionTimeout]");
    }

    @Test
    void unknownOption_withAHugeOrMultiLineName_isShownShort() {
        BackendConfig config = config(Map.of("a\nb", "1", "n".repeat(100_000), "2"));
        assertThatThrownBy(() -> config.rejectUnknownOptions("test"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageStartingWith("Unknown options [a\\u000ab, " + "n".repeat(40) + "...] for the test backend");
    }
}
