package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConformanceCommandTest {

    /**
     * The command's pass and skip paths, on the kit's Theorem 1 tests (the whole kit on the memory store is the kit's
     * own self-test, {@code MemoryConformanceTest}; here it would only repeat that through the command).
     */
    @Test
    void conformance_memory_passesTheSelectedTests_skipsMultiProcessWithReason() {
        Cli cli = Cli.run("conformance", "--store", "memory://conformance", "--only", ".*theorem1");

        assertThat(cli.exitCode()).as(cli.out()).isZero();
        assertThat(cli.out())
                .contains("PASS  lock_isExclusive_manyThreadsOneKey_theorem1")
                .contains("SKIP  lock_isExclusive_acrossProcesses_theorem1")
                .contains("memory: locks only within one JVM")
                .containsPattern("\\d+ tests: [1-9]\\d* passed, 0 failed, [1-9]\\d* skipped")
                .doesNotContain("FAIL ");
    }

    @Test
    void conformance_brokenStore_reportsTheFailedTheoremWithItsEvidence() {
        Cli cli = Cli.run("conformance", "--store", "noexclusion://conformance", "--only", ".*manyThreadsOneKey.*");

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.FAILED);
        assertThat(cli.out())
                .contains("FAIL  lock_isExclusive_manyThreadsOneKey_theorem1")
                .contains("FAIL  tryLock_isExclusive_manyThreadsOneKey_theorem3")
                .containsPattern("\\n {8}\\S") // the evidence, indented under the test
                .contains("2 tests: 0 passed, 2 failed, 0 skipped")
                .contains("FAILED: ");
    }

    @Test
    void conformance_badUri_oneLineAndUsageCode() {
        Cli cli = Cli.run("conformance", "--store", "nosuch://h/kit");

        assertThat(cli.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err().strip().lines()).hasSize(1);
        assertThat(cli.err()).contains("Unknown lock URI scheme 'nosuch'");
    }
}
