package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.assertRefused;
import static io.distlock.lockctl.BenchRuns.bench;
import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --threads T}: every worker JVM runs T threads on its one locker, each a party of the run. */
class BenchThreadsTest {

    @TempDir
    Path dir;

    @Test
    void bench_threads_everyThreadOfEveryProcessTakesTheKeyNTimes() throws Exception {
        Path out = dir.resolve("threads");
        Cli cli = bench(
                out,
                "--store",
                "memory:",
                "--processes",
                "2",
                "--threads",
                "3",
                "--acquisitions",
                "10",
                "--warm-up",
                "2");

        JsonNode run = report(out).get("runs").get(0);
        JsonNode summary = run.get("summary");
        assertThat(summary.get("processes").asInt()).isEqualTo(2);
        assertThat(summary.get("threads").asInt()).isEqualTo(3);
        assertThat(summary.get("acquisitions").asInt()).isEqualTo(2 * 3 * 10);
        assertThat(summary.get("acquisitionsPerKey"))
                .extracting(JsonNode::asInt)
                .containsExactly(60);
        // one line of grants per party, 6 parties: the index lies between 1/6 (one party took all) and 1
        assertThat(run.get("grantMs")).hasSize(6).allSatisfy(grants -> assertThat(grants)
                .hasSize(10));
        assertThat(summary.get("jain").asDouble()).isBetween(1.0 / 6, 1.0);
        assertThat(report(out).get("comparisons").get(0).get("threads").asInt()).isEqualTo(3);
        assertThat(cli.out()).contains("P x T").contains("2 x 3").contains("--threads 3");
        assertThat(out.resolve("figure1-store0-p2.png")).exists();
    }

    @Test
    void replot_reportWrittenBeforeThreads_readsAsOneThreadPerProcess() throws Exception {
        Path out = dir.resolve("old");
        bench(out, "--store", "memory:", "--processes", "2", "--acquisitions", "10", "--warm-up", "2", "--no-charts");
        JsonNode old = report(out);
        ((ObjectNode) old.get("comparisons").get(0)).remove("threads");
        ((ObjectNode) old.get("runs").get(0).get("summary")).remove(List.of("threads", "threadHandOffsPerSecond"));
        new ObjectMapper().writeValue(out.resolve("bench.json").toFile(), old);

        Cli replot = Cli.run("bench", "--replot", out.toString());

        assertThat(replot.exitCode()).as(replot.err()).isZero();
        assertThat(replot.out()).doesNotContain("P x T");
        assertThat(out.resolve("figure1-store0-p2.png")).exists();
    }

    @Test
    void bench_threadsOutOfRangeOrOutsideTheContendedMode_oneLineAndUsageCode() {
        assertRefused("--threads must be between 1 and 64", "bench", "--store", "memory:", "--threads", "0");
        assertRefused(
                "--threads applies to the contended mode only",
                "bench",
                "--store",
                "memory:",
                "--threads",
                "2",
                "--mode",
                "uncontended");
        assertRefused(
                "--threads applies to the contended mode only",
                "bench",
                "--store",
                "memory:",
                "--threads",
                "2",
                "--held",
                "10");
    }

    /** A target whose lock belongs to its process (the test peer keeps the default) is refused, before any worker. */
    @Test
    void bench_threads_onATargetThatThreadsCannotShare_oneLineAndUsageCode() {
        Cli shared = Cli.run("bench", "--store", "memory:", "--store", "peer:ballast://1", "--threads", "2");

        assertThat(shared.exitCode()).as(shared.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(shared.err())
                .contains("--threads 2 cannot measure peer:ballast://1")
                .contains("measure it with --threads 1");
    }
}
