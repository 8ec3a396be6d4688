package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
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

    /** The end of a run: closing the target under a waiting candidate ends its thread without an error. */
    @Test
    void close_whileACandidateWaits_endsItsThreadQuietly() throws Exception {
        List<Throwable> uncaught = new CopyOnWriteArrayList<>();
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(e));
        try {
            BlockingQueue<String> elected = new LinkedBlockingQueue<>();
            Thread waiting;
            try (BenchTarget a = Targets.open("handoff:memory://handoff-close")) {
                BenchTarget b = Targets.open("handoff:memory://handoff-close");
                a.join("e", "closing-a", () -> elected.add("a"));
                assertThat(elected.poll(10, TimeUnit.SECONDS)).isEqualTo("a");
                b.join("e", "closing-b", () -> elected.add("b")); // names no other test's candidates take
                waiting = candidateThread("closing-b");
                b.close();
                waiting.join(TimeUnit.SECONDS.toMillis(10));
            }
            assertThat(waiting.isAlive())
                    .as("the waiting candidate's thread ended")
                    .isFalse();
            assertThat(uncaught).as("errors of the candidates' threads").isEmpty();
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
    }

    /** The thread of candidate {@code identity}: {@code join} starts it before it returns. */
    private static Thread candidateThread(String identity) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("handoff-candidate-" + identity))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no thread of candidate " + identity));
    }
}
