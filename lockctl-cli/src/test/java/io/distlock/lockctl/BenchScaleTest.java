package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.bench;
import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's scale options: {@code --keys} spreads the acquisitions, {@code --held} weighs a held lock. */
class BenchScaleTest {

    @TempDir
    Path dir;

    @Test
    void bench_keys_spreadsTheAcquisitionsEvenlyOverTheKeys() throws Exception {
        Path out = dir.resolve("keys");
        Cli cli = bench(
                out,
                "--store",
                "memory:",
                "--processes",
                "2",
                "--acquisitions",
                "20",
                "--keys",
                "4",
                "--warm-up",
                "2",
                "--no-charts");

        JsonNode summary = report(out).get("runs").get(0).get("summary");
        assertThat(summary.get("keys").asInt()).isEqualTo(4);
        // 2 workers x 20 acquisitions, each worker taking the 4 keys in turn: 10 per key
        assertThat(summary.get("acquisitionsPerKey"))
                .extracting(JsonNode::asInt)
                .containsExactly(10, 10, 10, 10);
        assertThat(summary.get("handOffsPerKey")).hasSize(4);
        assertThat(cli.out()).contains("4 keys, acquisitions per key [10, 10, 10, 10]");
    }

    @Test
    void bench_held_measuresWhatEachHeldLockKeeps() throws Exception {
        Path out = dir.resolve("held");
        Cli cli = bench(
                out,
                "--store",
                "peer:ballast://4096",
                "--processes",
                "1",
                "--acquisitions",
                "5",
                "--warm-up",
                "2",
                "--held",
                "2000",
                "--no-charts");

        JsonNode held = report(out).get("heapPerHeldLockBytes");
        assertThat(held).hasSize(1);
        // the 4096-byte array (plus its 16-byte header) and the engine's own handle of the lock, a few dozen bytes
        assertThat(held.get(0).get("bytesPerLock").asDouble()).isBetween(4096.0, 4096.0 + 256);
    }
}
