package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.bench;
import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {

    private static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    @TempDir
    Path dir;

    @Test
    void bench_onTheEmbeddedStore_writesJsonChartsAndPage() throws Exception {
        Path out = dir.resolve("report");
        Cli cli = bench(out, "--processes", "1,2", "--acquisitions", "20", "--warm-up", "5");

        assertThat(cli.out()).contains("Report: " + out.resolve("index.html").toAbsolutePath());
        JsonNode json = report(out);
        // the fair queue beside the unfair retry loop on the same embedded server
        assertThat(json.get("stores")).hasSize(2);
        String fair = json.get("stores").get(0).asText();
        assertThat(fair).startsWith("zk://127.0.0.1:");
        assertThat(json.get("stores").get(1).asText()).isEqualTo("unfair:" + fair);
        assertThat(cli.out()).contains("fair queue").contains("unfair retry loop");
        JsonNode runs = json.get("runs");
        assertThat(runs).hasSize(4);
        assertThat(runs.findValuesAsText("store")).containsExactly(fair, "unfair:" + fair, fair, "unfair:" + fair);
        JsonNode unfairTwo = runs.get(3).get("summary");
        assertThat(unfairTwo.get("processes").asInt()).isEqualTo(2);
        assertThat(unfairTwo.get("acquisitions").asInt()).isEqualTo(40);
        JsonNode twoProcesses = runs.get(2);
        assertThat(twoProcesses.get("summary").get("processes").asInt()).isEqualTo(2);
        assertThat(twoProcesses.get("summary").get("acquisitions").asInt()).isEqualTo(40);
        assertThat(twoProcesses.get("grantMs")).hasSize(2);
        assertThat(twoProcesses.get("grantMs").get(1)).hasSize(20);
        assertThat(twoProcesses.get("waitMs").get(0)).hasSize(20);
        assertThat(twoProcesses.get("summary").get("jain").asDouble()).isBetween(0.5, 1.0);
        assertThat(twoProcesses.get("summary").get("acquisitionsPerSecond").asDouble())
                .isPositive();
        assertThat(twoProcesses.get("summary").get("workerPeakRssMiB")).hasSize(2);
        // where the CPU went, by the threads' Java names: the taking threads and the ZooKeeper client's I/O thread
        JsonNode byThread = twoProcesses.get("summary").get("cpuByThread");
        assertThat(byThread.findValuesAsText("threads")).contains("pool-N-thread-N", "main-SendThread(N.N.N.N:N)");
        for (JsonNode group : byThread) {
            if (group.get("threads").asText().equals("main-SendThread(N.N.N.N:N)")) {
                assertThat(group.get("cpuMsPerAcquisition").asDouble()).isPositive();
                assertThat(group.get("switchesPerAcquisition").asDouble()).isPositive();
            }
            if (group.get("threads").asText().equals("pool-N-thread-N")) {
                assertThat(group.get("allocatedBytesPerAcquisition").asDouble()).isPositive();
            }
        }
        // the per-thread tables are in the report's summary, not on the console (unless --cpu)
        assertThat(Files.readString(out.resolve("summary.txt")))
                .contains("Where the CPU goes, P=2")
                .containsPattern("main-SendThread\\(N\\.N\\.N\\.N:N\\) +[0-9.]+ / [0-9.]+ / [0-9]+");
        assertThat(cli.out()).doesNotContain("Where the CPU goes, P=").contains("summary.txt");

        String html = Files.readString(out.resolve("index.html"));
        try (var files = Files.list(out)) {
            var charts = files.filter(f -> f.toString().endsWith(".png")).toList();
            assertThat(charts)
                    .extracting(f -> f.getFileName().toString())
                    .contains("figure1-store0-p2.png", "figure1-store1-p2.png", "waits-p2.png");
            for (Path chart : charts) {
                byte[] bytes = Files.readAllBytes(chart);
                assertThat(Arrays.copyOf(bytes, PNG.length))
                        .as(chart.toString())
                        .isEqualTo(PNG);
                assertThat(bytes.length).as(chart.toString()).isGreaterThan(10_000);
                assertThat(html).contains("src=\"" + chart.getFileName() + "\"");
            }
        }
    }

    @Test
    void bench_twoStores_alternateAndGivePairedRatios() throws Exception {
        Path out = dir.resolve("two");
        Cli cli = bench(
                out,
                "--store",
                "memory:",
                "--store",
                "memory://other",
                "--processes",
                "1",
                "--acquisitions",
                "20",
                "--warm-up",
                "2",
                "--rounds",
                "2",
                "--no-charts");

        JsonNode json = report(out);
        JsonNode runs = json.get("runs");
        assertThat(runs).hasSize(4);
        // A B A B: the stores alternate within every round
        assertThat(runs.findValuesAsText("store"))
                .containsExactly("memory:", "memory://other", "memory:", "memory://other");
        assertThat(runs.findValues("round")).extracting(JsonNode::asInt).containsExactly(1, 1, 2, 2);
        JsonNode comparisons = json.get("comparisons");
        assertThat(comparisons).hasSize(2);
        assertThat(comparisons.get(0).get("rateRatio").asDouble()).isEqualTo(1.0);
        assertThat(comparisons.get(1).get("rounds").asInt()).isEqualTo(2);
        assertThat(comparisons.get(1).get("rateRatio").asDouble()).isPositive();
        assertThat(comparisons.get(1).get("storeRequestsPerAcquisition").isNull())
                .isTrue();
        assertThat(cli.out()).contains("rate x").contains("memory://other");
    }

    @Test
    void bench_cpu_printsWhereTheCpuGoes() throws Exception {
        Cli cli = bench(
                dir.resolve("cpu"),
                "--store",
                "memory:",
                "--processes",
                "1",
                "--acquisitions",
                "20",
                "--warm-up",
                "2",
                "--no-charts",
                "--cpu");

        assertThat(cli.out())
                .contains("Where the CPU goes, P=1")
                .containsPattern("pool-N-thread-N +[0-9.]+ / [0-9.]+ / [0-9]+");
    }

    @Test
    void bench_uncontended_interleavesTheStoresInOneJvm() throws Exception {
        Path out = dir.resolve("uncontended");
        Cli cli = bench(
                out,
                "--store",
                "memory:",
                "--store",
                "memory://other",
                "--mode",
                "uncontended",
                "--acquisitions",
                "50",
                "--rounds",
                "3",
                "--no-charts");

        JsonNode json = report(out);
        JsonNode uncontended = json.get("uncontended");
        assertThat(uncontended).hasSize(2);
        assertThat(uncontended.get(0).get("ratio").asDouble()).isEqualTo(1.0);
        assertThat(uncontended.get(1).get("meanMs").asDouble()).isPositive();
        assertThat(json.get("runs")).isEmpty();
    }

    @Test
    void bench_held_reportsHeapPerHeldLock() throws Exception {
        Path out = dir.resolve("held");
        Cli cli = bench(
                out, "--store", "memory:", "--processes", "1", "--acquisitions", "5", "--held", "2000", "--no-charts");

        JsonNode held = report(out).get("heapPerHeldLockBytes");
        assertThat(held).hasSize(1);
        assertThat(held.get(0).get("held").asInt()).isEqualTo(2000);
        assertThat(held.get(0).get("bytesPerLock").asDouble()).isPositive();
        assertThat(cli.out()).contains("Client heap per held lock, 2000 locks");
    }

    @Test
    void bench_held_twoStores_keepOneWorkerLogEach() throws Exception {
        Path out = dir.resolve("held-two");
        bench(
                out,
                "--store",
                "memory:",
                "--store",
                "memory://other",
                "--processes",
                "1",
                "--acquisitions",
                "5",
                "--warm-up",
                "5",
                "--held",
                "100",
                "--no-charts");

        assertThat(report(out).get("heapPerHeldLockBytes")).hasSize(2);
        assertThat(out.resolve("work").resolve("held-s0-w0.log")).exists();
        assertThat(out.resolve("work").resolve("held-s1-w0.log")).exists();
    }

    @Test
    void bench_badArguments_oneLineAndUsageCode() {
        Cli unknown = Cli.run("bench", "--store", "nosuch://h/x", "--no-charts", "--out", dir.toString());
        assertThat(unknown.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(unknown.err()).contains("Unknown lock URI scheme 'nosuch'").doesNotContain("\tat ");
        assertThat(unknown.err().strip().lines()).hasSize(1);

        Cli negative = Cli.run("bench", "--acquisitions", "-3");
        assertThat(negative.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(negative.err()).contains("--acquisitions");

        Cli processes = Cli.run("bench", "--processes", "0");
        assertThat(processes.exitCode()).isEqualTo(ExitCodes.USAGE);

        Cli peer = Cli.run("bench", "--store", "peer:nothing://h", "--out", dir.toString());
        assertThat(peer.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(peer.err()).contains("Unknown peer 'peer:nothing://h'");
    }
}
