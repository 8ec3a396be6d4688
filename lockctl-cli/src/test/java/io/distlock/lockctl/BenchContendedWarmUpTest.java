package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.assertRefused;
import static io.distlock.lockctl.BenchRuns.bench;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --contended-warm-up N}: after its private warm-up, every thread of every worker takes one shared key N times,
 * and the measured part starts only once every worker has finished that.
 */
class BenchContendedWarmUpTest {

    @TempDir
    Path dir;

    @Test
    void bench_contendedWarmUp_everyThreadTakesTheSharedKeyNTimesBeforeAnyMeasuredAcquisition() throws Exception {
        Path recorded = dir.resolve("acquisitions.txt");
        Cli cli = bench(
                dir.resolve("out"),
                "--store",
                "peer:recording://" + recorded,
                "--processes",
                "2",
                "--threads",
                "2",
                "--acquisitions",
                "3",
                "--warm-up",
                "1",
                "--contended-warm-up",
                "4",
                "--no-charts");

        List<String> lines = Files.readAllLines(recorded);
        List<String> shared =
                lines.stream().filter(l -> l.endsWith("warm-up-shared")).toList();
        assertThat(shared).as("acquisitions of the shared warm-up key").hasSize(2 * 2 * 4);
        assertThat(shared.stream().map(l -> l.split(" ")[0]).distinct())
                .as("worker processes that took the shared key")
                .hasSize(2);
        List<String> measured =
                lines.stream().filter(l -> !l.contains("warm-up")).toList();
        assertThat(measured).as("measured acquisitions").hasSize(2 * 2 * 3);
        assertThat(lines.lastIndexOf(shared.get(shared.size() - 1)))
                .as("the last shared warm-up acquisition comes before the first measured one")
                .isLessThan(lines.indexOf(measured.get(0)));
        assertThat(cli.out()).contains("--contended-warm-up 4");
    }

    @Test
    void bench_contendedWarmUp_negativeOrOutsideTheContendedMode_oneLineAndUsageCode() {
        assertRefused(
                "--contended-warm-up must not be negative", "bench", "--store", "memory:", "--contended-warm-up", "-1");
        assertRefused(
                "--contended-warm-up applies to the contended mode only",
                "bench",
                "--store",
                "memory:",
                "--contended-warm-up",
                "5",
                "--mode",
                "uncontended");
    }
}
