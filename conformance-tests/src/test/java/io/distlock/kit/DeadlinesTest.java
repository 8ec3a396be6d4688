package io.distlock.kit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
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

    @Test
    void steady_aValueThatStopsMoving_returnsItsLastValue() throws InterruptedException {
        AtomicLong calls = new AtomicLong();
        // counts up on each of its first 20 reads, then stays
        long value = Deadlines.steady(
                () -> Math.min(calls.incrementAndGet(), 20), Duration.ofMillis(50), Duration.ofSeconds(10), "x");
        assertThat(value).isEqualTo(20);
    }

    @Test
    void steady_aValueThatNeverStops_failsAtTheTimeout_namingIt() {
        AtomicLong calls = new AtomicLong();
        assertThatThrownBy(() -> Deadlines.steady(
                        calls::incrementAndGet, Duration.ofMillis(50), Duration.ofMillis(300), "the count"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the count never stood still");
    }
}
