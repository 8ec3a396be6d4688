package io.distlock.toolkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A lease's loss: recorded once, validity frozen, the locker told once. */
class LeaseLossTest {

    private final List<String> told = new ArrayList<>();
    private final LeaseLoss loss = new LeaseLoss(told::add);

    @Test
    void validUntilNanos_beforeTheLoss_isTheLiveOne() {
        assertThat(loss.isLost()).isFalse();
        assertThat(loss.validUntilNanos(42)).isEqualTo(42);
        assertThat(told).isEmpty();
    }

    @Test
    void lose_freezesTheValidity_andTellsTheListener() {
        loss.lose(7, "session ended");

        assertThat(loss.isLost()).isTrue();
        assertThat(loss.validUntilNanos(42)).isEqualTo(7);
        assertThat(told).containsExactly("session ended");
    }

    @Test
    void lose_again_changesNothing_andTellsNoMore() {
        loss.lose(7, "session ended");
        loss.lose(9, "node deleted");

        assertThat(loss.validUntilNanos(42)).isEqualTo(7);
        assertThat(told).containsExactly("session ended");
    }
}
