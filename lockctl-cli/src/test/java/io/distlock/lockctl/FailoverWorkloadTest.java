package io.distlock.lockctl;

import static io.distlock.lockctl.BenchRuns.assertRefused;
import static io.distlock.lockctl.BenchRuns.bench;
import static io.distlock.lockctl.BenchRuns.report;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.distlock.kit.TestTimeouts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --workload failover} on the embedded ZooKeeper: three candidate JVMs of one election, whose leader steps down
 * or is killed with SIGKILL, round by round; the time to the next leader's first "you lead".
 */
class FailoverWorkloadTest {

    /** The session timeout of every candidate: short, so that a killed leader's session expires soon. */
    private static final Duration TTL = Duration.ofSeconds(3);
    /** Beyond the session timeout: the server's tick, the watch's round trip, the listener, a loaded machine. */
    private static final Duration SLACK = TestTimeouts.scaled(Duration.ofSeconds(2));

    @TempDir
    Path dir;

    @Test
    void failover_embeddedZooKeeper_stepDownsHandOverAtOnce_killsWithinTheSessionTime() throws Exception {
        Path out = dir.resolve("zk");
        Cli cli = bench(
                out,
                "--workload",
                "failover",
                "--failovers",
                "2",
                "--warm-up",
                "1",
                "--store",
                "zk://embedded/bench?ttl=" + TTL.toSeconds() + "s",
                "--no-charts");

        JsonNode json = report(out);
        List<JsonNode> stepDowns = new ArrayList<>();
        List<JsonNode> kills = new ArrayList<>();
        json.get("failoverRuns").forEach(r -> (r.get("kind").asText().equals("kill") ? kills : stepDowns).add(r));
        assertThat(stepDowns).hasSize(2);
        assertThat(kills).hasSize(2);
        for (JsonNode r : json.get("failoverRuns")) {
            assertThat(r.get("to").asInt())
                    .as("another candidate leads next: %s", r)
                    .isNotEqualTo(r.get("from").asInt());
        }
        // a clean step-down releases the election's lock: the next leader does not wait for a session to expire
        assertThat(stepDowns)
                .allSatisfy(r -> assertThat(r.get("millis").asDouble()).isBetween(0.0, TTL.toMillis() / 2.0));
        // a killed leader says no goodbye: its session expires, some time after its last ping, within the timeout
        assertThat(kills).allSatisfy(r -> assertThat(r.get("millis").asDouble())
                .isBetween(TTL.toMillis() / 2.0, (double) TTL.plus(SLACK).toMillis()));
        JsonNode summaries = json.get("failover");
        assertThat(summaries).hasSize(2);
        assertThat(summaries.get(0).get("kind").asText()).isEqualTo("step-down");
        assertThat(summaries.get(1).get("kind").asText()).isEqualTo("kill");
        for (JsonNode s : summaries) {
            assertThat(s.get("rounds").asInt()).isEqualTo(2);
            assertThat(s.get("medianMs").asDouble())
                    .isPositive()
                    .isLessThanOrEqualTo(s.get("p99Ms").asDouble());
            assertThat(s.get("p99Ms").asDouble())
                    .isLessThanOrEqualTo(s.get("maxMs").asDouble());
            assertThat(s.get("ratio").isNull()).isTrue();
        }
        assertThat(json.get("workload").get("name").asText()).isEqualTo("failover");
        assertThat(cli.out())
                .contains("Failover: from the leader's step-down call")
                .containsPattern("step-down +zk://")
                .containsPattern("kill +zk://")
                .contains("--workload failover --failovers 2 --warm-up 1");
    }

    @Test
    void failovers_notAPositiveCountOrWithoutTheWorkload_exitsTwoNamingTheOption() {
        assertRefused(
                "--failovers must be at least 1",
                "bench",
                "--workload",
                "failover",
                "--failovers",
                "0",
                "--store",
                "memory:");
        assertRefused(
                "--failovers applies to --workload failover only", "bench", "--failovers", "5", "--store", "memory:");
        assertRefused(
                "--workload failover takes one --processes, the election's candidates, at least 2",
                "bench",
                "--workload",
                "failover",
                "--processes",
                "1",
                "--store",
                "memory:");
        assertRefused(
                "--threads, --held, --contended-warm-up, --rounds, --keys and --hold do not apply",
                "bench",
                "--workload",
                "failover",
                "--threads",
                "2",
                "--store",
                "memory:");
    }
}
