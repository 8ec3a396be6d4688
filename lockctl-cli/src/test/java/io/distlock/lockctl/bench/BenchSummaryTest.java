package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Engine#summarize}: the figures of a run whose processes ran several threads, from synthetic results. */
class BenchSummaryTest {

    private static final long MILLI = 1_000_000;

    /**
     * Two processes of three threads, four acquisitions per thread, one grant a millisecond in this order. Until slot
     * 14 the processes alternate (7 grants each): process 0 rotates its threads 0, 1, 2; process 1 only its threads 0
     * and 1, and its thread 0 takes its 4th grant at slot 14 — the first party done. Then process 0's last five
     * grants, process 1's thread 1, and its thread 2's four.
     */
    private static final int[][] SCHEDULE = {
        {0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 0}, {0, 0}, {1, 1}, {0, 1}, {1, 0}, {0, 2}, {1, 1}, {0, 0}, {1, 0},
        {0, 1}, {0, 2}, {0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {1, 2}, {1, 2}, {1, 2}
    };

    @Test
    void summarize_threadStarvedWithinItsProcess_lowersJainThoughTheProcessesShareEqually() {
        RunSummary run =
                Engine.summarize("memory:", 0, 1, 1, 3, resultsOf(SCHEDULE)).summary();

        assertThat(run.processes()).isEqualTo(2);
        assertThat(run.threads()).isEqualTo(3);
        assertThat(run.acquisitions()).isEqualTo(2 * 3 * 4);
        // up to slot 14 the parties' grants are 3, 2, 2 (process 0) and 4, 3, 0 (process 1): 14^2 / (6 x 42);
        // over the processes, 7 and 7, the index would be 1
        assertThat(run.jain()).isCloseTo(196.0 / 252.0, within(1e-9));
    }

    @Test
    void summarize_severalThreads_handOffsCountProcessChangesAndThreadChangesApart() {
        RunSummary run =
                Engine.summarize("memory:", 0, 1, 1, 3, resultsOf(SCHEDULE)).summary();

        // 13 changes of process among slots 1-14, then 14 -> 15 and 19 -> 20
        assertThat(run.handOffsPerKey()).containsExactly(15);
        assertThat(run.handOffsPerSecond() * run.seconds()).isCloseTo(15, within(1e-6));
        // within process 0 among slots 15-19 (4), then process 1's thread 1 to its thread 2 (1)
        assertThat(run.threadHandOffsPerSecond() * run.seconds()).isCloseTo(5, within(1e-6));
    }

    @Test
    void summarize_severalThreads_givesEveryPartyItsLineOfGrants() {
        RunData run = Engine.summarize("memory:", 0, 1, 1, 3, resultsOf(SCHEDULE));

        assertThat(run.grantMs()).hasSize(6).allSatisfy(grants -> assertThat(grants)
                .hasSize(4));
        // party 5 is process 1's thread 2: slots 21-24, the first attempt (slot 1, 0.5 ms early) being the start
        assertThat(run.grantMs().get(5)).containsExactly(20.5, 21.5, 22.5, 23.5);
    }

    @Test
    void summarize_threadGroups_addUpOverTheWorkers_perAcquisition_largestFirst() {
        RunSummary run =
                Engine.summarize("memory:", 0, 1, 1, 3, resultsOf(SCHEDULE)).summary();

        // 24 acquisitions: the callers' 8 ms, 16 switches and 6000 bytes; the I/O thread's 3 ms, 24 switches, 2400
        // bytes
        assertThat(run.cpuByThread())
                .containsExactly(
                        new RunSummary.ThreadShare("pool-N-thread-N", 8.0 / 24, 16.0 / 24, 250),
                        new RunSummary.ThreadShare("main-SendThread(N.N.N.N:N)", 3.0 / 24, 1.0, 100));
    }

    /** The workers' results of a schedule of (process, thread) grants on one key, slot s granted at s ms. */
    private static List<WorkerResult> resultsOf(int[][] schedule) {
        List<WorkerResult> results = new ArrayList<>();
        for (int w = 0; w < 2; w++) {
            List<Integer> slots = new ArrayList<>();
            for (int s = 0; s < schedule.length; s++) {
                if (schedule[s][0] == w) {
                    slots.add(s);
                }
            }
            int n = slots.size();
            long[] attempt = new long[n];
            long[] grant = new long[n];
            long[] release = new long[n];
            int[] thread = new int[n];
            for (int i = 0; i < n; i++) {
                int slot = slots.get(i);
                grant[i] = (slot + 1) * MILLI;
                attempt[i] = grant[i] - MILLI / 2;
                release[i] = grant[i] + MILLI / 10;
                thread[i] = schedule[slot][1];
            }
            results.add(new WorkerResult(
                    w,
                    attempt,
                    grant,
                    release,
                    new int[n],
                    thread,
                    null,
                    null,
                    new long[] {-1},
                    MILLI,
                    -1,
                    0,
                    w == 0
                            ? List.of(
                                    new ThreadCpu("pool-N-thread-N", 6 * MILLI, 12, 4800),
                                    new ThreadCpu("main-SendThread(N.N.N.N:N)", 3 * MILLI, 24, 2400))
                            : List.of(new ThreadCpu("pool-N-thread-N", 2 * MILLI, 4, 1200))));
        }
        return results;
    }
}
