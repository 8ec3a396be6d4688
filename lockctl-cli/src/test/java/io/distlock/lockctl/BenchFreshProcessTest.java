package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.bench;
import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Performance as users meet it: {@code --warm-up 0} (and the default {@code --contended-warm-up 0}) measures fresh
 * worker JVMs from their first acquisition, in the contended and the uncontended mode.
 */
class BenchFreshProcessTest {

    @TempDir
    Path dir;

    @Test
    void bench_warmUpZero_contendedAndUncontended_measureFromTheFirstAcquisition() throws Exception {
        Path contended = dir.resolve("contended.txt");
        Cli cli = bench(
                dir.resolve("contended"),
                "--store",
                "peer:recording://" + contended,
                "--processes",
                "2",
                "--acquisitions",
                "3",
                "--warm-up",
                "0",
                "--no-charts");
        assertThat(cli.out()).contains("--warm-up 0");
        List<String> lines = Files.readAllLines(contended);
        assertThat(lines).as("every acquisition of the contended run").hasSize(2 * 3);
        assertThat(lines).as("none of a warm-up").noneMatch(l -> l.contains("warm-up"));

        Path uncontended = dir.resolve("uncontended.txt");
        bench(
                dir.resolve("uncontended"),
                "--store",
                "peer:recording://" + uncontended,
                "--mode",
                "uncontended",
                "--acquisitions",
                "4",
                "--warm-up",
                "0",
                "--no-charts");
        lines = Files.readAllLines(uncontended);
        assertThat(lines).as("every acquisition of the uncontended run").hasSize(4);
        assertThat(lines).as("none of a warm-up").noneMatch(l -> l.contains("warm-up"));
    }

    @Test
    void bench_warmUpZero_uncontended_onAZooKeeperOfItsOwn_measuresBothStores() throws Exception {
        Path out = dir.resolve("zk");
        bench(
                out,
                "--store",
                "zk://process/a",
                "--store",
                "zk://process/b",
                "--mode",
                "uncontended",
                "--acquisitions",
                "20",
                "--warm-up",
                "0",
                "--no-charts");

        JsonNode json = report(out);
        assertThat(json.get("stores").get(0).asText()).matches("zk://127\\.0\\.0\\.1:\\d+/a");
        JsonNode stores = json.get("uncontended");
        assertThat(stores).hasSize(2);
        for (JsonNode store : stores) {
            assertThat(store.get("meanMs").asDouble()).isPositive();
        }
        assertThat(json.get("command").asText()).contains("--warm-up 0");
    }
}
