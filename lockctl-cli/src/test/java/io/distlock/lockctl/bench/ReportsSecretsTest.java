package io.distlock.lockctl.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code lockctl bench} writes never carries a password given in a store's URI. */
class ReportsSecretsTest {

    @Test
    void benchJson_hidesSecretOptionsOfTheStores() throws Exception {
        String store = "redis://127.0.0.1:6379?user=locker&password=s3cr3t-Pa55&tls=true";
        BenchReport report = new BenchReport(
                "lockctl bench --store " + store,
                "test",
                List.of(store),
                List.of(),
                List.of(),
                List.of(new BenchReport.HeldSummary(store, 10, 100.0)),
                List.of(),
                Workload.LOCK,
                List.of(),
                List.of());
        String json = new ObjectMapper().registerModule(Reports.hidingSecrets()).writeValueAsString(report);
        assertThat(json).doesNotContain("s3cr3t-Pa55").contains("password=****").contains("user=locker");
        assertThat(Reports.text(report, true)).doesNotContain("s3cr3t-Pa55");
    }
}
