package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.assertRefused;
import static io.distlock.lockctl.BenchRuns.bench;
import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --workload read-heavy} and {@code --workload semaphore}: what each acquisition takes, the rate of each side,
 * and the run's history checked against the workload's rule. On {@code memory:} the store lives in each worker JVM,
 * so the contention is between the threads of one worker.
 */
class BenchWorkloadTest {

    @TempDir
    Path dir;

    @Test
    void readHeavy_memory_ratePerSideAndNoViolation() throws Exception {
        Path out = dir.resolve("read-heavy");
        Cli cli = bench(
                out,
                "--store",
                "memory:",
                "--workload",
                "read-heavy",
                "--processes",
                "1",
                "--threads",
                "4",
                "--acquisitions",
                "40",
                "--warm-up",
                "5",
                "--hold",
                "1ms",
                "--no-charts");

        JsonNode summary = report(out).get("runs").get(0).get("summary");
        assertThat(summary.get("workload").asText()).isEqualTo("read-heavy");
        assertThat(summary.get("violations").asInt()).isZero();
        assertThat(summary.get("readsPerSecond").asDouble()).isPositive();
        assertThat(summary.get("writesPerSecond").asDouble()).isPositive();
        assertThat(report(out).get("workload").get("readShare").asDouble()).isEqualTo(0.9);
        assertThat(cli.out())
                .contains("workload read-heavy (read-write lock, 90 % reads)")
                .contains("reads ")
                .contains("writes ")
                .contains("--workload read-heavy --read-share 0.9")
                .doesNotContain("VIOLATION");
    }

    @Test
    void semaphore_memory_atMostThePermitsAtOnceAndNoViolation() throws Exception {
        Path out = dir.resolve("semaphore");
        Cli cli = bench(
                out,
                "--store",
                "memory:",
                "--workload",
                "semaphore",
                "--permits",
                "2",
                "--processes",
                "1",
                "--threads",
                "4",
                "--acquisitions",
                "30",
                "--warm-up",
                "5",
                "--hold",
                "1ms",
                "--no-charts");
        Cli held = bench(
                dir.resolve("held"),
                "--store",
                "memory:",
                "--workload",
                "semaphore",
                "--processes",
                "1",
                "--acquisitions",
                "5",
                "--warm-up",
                "5",
                "--held",
                "20",
                "--no-charts");

        JsonNode summary = report(out).get("runs").get(0).get("summary");
        assertThat(summary.get("workload").asText()).isEqualTo("semaphore");
        assertThat(summary.get("violations").asInt()).isZero();
        assertThat(summary.get("mostHeldAtOnce").asInt()).isBetween(1, 2);
        assertThat(summary.get("readsPerSecond").isNull()).isTrue();
        assertThat(cli.out()).contains("workload semaphore (2 permits)").doesNotContain("VIOLATION");
        assertThat(held.out()).contains("Client heap per held permit, 20 permits held");
    }

    /** A target that excludes nothing (every kind granted at once): the history check flags the run. */
    @Test
    void semaphore_brokenTargetOverGrants_runFlaggedAsViolation() throws Exception {
        Path out = dir.resolve("broken");
        Cli cli = bench(
                out,
                "--store",
                "peer:no-exclusion://x",
                "--workload",
                "semaphore",
                "--permits",
                "2",
                "--processes",
                "1",
                "--threads",
                "4",
                "--acquisitions",
                "20",
                "--warm-up",
                "1",
                "--hold",
                "5ms",
                "--no-charts");

        JsonNode summary = report(out).get("runs").get(0).get("summary");
        assertThat(summary.get("violations").asInt()).isPositive();
        assertThat(summary.get("mostHeldAtOnce").asInt()).isGreaterThan(2);
        assertThat(summary.get("firstViolation").asText()).contains("permit").contains("at most 2 at once");
        assertThat(cli.out()).contains("VIOLATION").contains("broke the semaphore rule");
    }

    @Test
    void workloadOptions_unknownOrOutOfRangeOrMisplaced_oneLineAndUsageCode() {
        assertRefused("Unknown --workload 'mutex'", "bench", "--store", "memory:", "--workload", "mutex");
        assertRefused(
                "--read-share must be between 0 and 1",
                "bench",
                "--store",
                "memory:",
                "--workload",
                "read-heavy",
                "--read-share",
                "90");
        assertRefused(
                "--permits must be at least 1",
                "bench",
                "--store",
                "memory:",
                "--workload",
                "semaphore",
                "--permits",
                "0");
        assertRefused(
                "--permits applies to --workload semaphore only",
                "bench",
                "--store",
                "memory:",
                "--workload",
                "read-heavy",
                "--permits",
                "3");
        assertRefused("--read-share applies to --workload read-heavy only", "bench", "--read-share", "0.5");
        assertRefused(
                "--workload semaphore applies to the contended mode and --held only",
                "bench",
                "--store",
                "memory:",
                "--workload",
                "semaphore",
                "--mode",
                "uncontended");
    }
}
