package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LockHandOffTargetTest {

    @Test
    void join_twoCandidates_oneLeads_steppingDownHandsTheLockOnAndQueuesAgain() throws Exception {
        BlockingQueue<String> elected = new LinkedBlockingQueue<>();
        try (BenchTarget a = Targets.open("handoff:memory://handoff");
                BenchTarget b = Targets.open("handoff:memory://handoff")) {
            BenchTarget.Candidate first = a.join("e", "a", () -> elected.add("a"));
            assertThat(elected.poll(10, TimeUnit.SECONDS)).isEqualTo("a");
            BenchTarget.Candidate second = b.join("e", "b", () -> elected.add("b"));
            assertThat(elected.poll(300, TimeUnit.MILLISECONDS))
                    .as("b waits while a holds the lock")
                    .isNull();
            assertThatThrownBy(second::stepDown)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("holds no lock");

            first.stepDown();
            assertThat(elected.poll(10, TimeUnit.SECONDS)).isEqualTo("b");
            assertThat(elected.poll(300, TimeUnit.MILLISECONDS))
                    .as("a queued again behind b")
                    .isNull();

            second.stepDown();
            assertThat(elected.poll(10, TimeUnit.SECONDS)).isEqualTo("a");
        }
    }
}
