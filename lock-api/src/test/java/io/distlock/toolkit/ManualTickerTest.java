package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ManualTickerTest {

    @Test
    void advance_movesTheReadingByTheAmount() {
        ManualTicker ticker = new ManualTicker();
        long before = ticker.read();
        ticker.advance(Duration.ofMillis(1500));
        assertThat(ticker.read() - before).isEqualTo(1_500_000_000L);
    }

    @Test
    void advance_backwards_isRefusedNamingTheAmountAsOptionsWriteIt() {
        ManualTicker ticker = new ManualTicker();
        assertThatThrownBy(() -> ticker.advance(Duration.ofMillis(-1500)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("A ticker never goes back; got -1500ms");
    }
}
