package io.distlock.kit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DeadlinesTest {

    @Test
    void leftUntil_aDeadlinePassed_isOneNanosecond_soTheNextCallIsNotGivenANonPositiveWait() {
        assertThat(Deadlines.leftUntil(System.nanoTime() - Duration.ofSeconds(1).toNanos()))
                .isEqualTo(Duration.ofNanos(1));
    }

    @Test
    void leftUntil_aDeadlineAhead_isWhatRemainsOfIt() {
        long start = System.nanoTime();
        Duration left = Deadlines.leftUntil(start + Duration.ofHours(1).toNanos());
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        assertThat(left)
                .isLessThanOrEqualTo(Duration.ofHours(1))
                .isGreaterThanOrEqualTo(Duration.ofHours(1).minus(elapsed));
    }
}
