package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.testing.RedisServers;
import io.distlock.testing.TestPki;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store URI with a literal password leaves it in no console line, no file of the report folder and no worker's
 * command line (which {@code ps} shows every local user): {@code lockctl bench} and {@code lockctl conformance}
 * against a Redis (TLS) whose only user has a password.
 */
class SecretsLeftBehindTest {

    private static final String PASSWORD = "marker-" + UUID.randomUUID();

    private static final TestPki PKI = TestPki.create(Path.of("target", "pki", "lockctl-" + UUID.randomUUID()));

    // TLS because the fixture's plain servers are found ready by a PING, which a server with ACL users answers NOAUTH
    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder()
            .tls(PKI)
            .aclUser("locker", PASSWORD, "~*", "&*", "+@all")
            .build();

    @TempDir
    Path dir;

    private static String store() {
        return "rediss://" + REDIS.endpoints().get(0) + "?user=locker&password=" + PASSWORD + "&caFile="
                + PKI.caFile().toAbsolutePath();
    }

    @Test
    void bench_withALiteralPassword_leavesItInNoOutputFileOrCommandLine() throws Exception {
        Path out = dir.resolve("report");
        CommandLines workers = new CommandLines();
        Cli cli;
        try (workers) {
            cli = Cli.run(
                    "bench",
                    "--store",
                    store(),
                    "--processes",
                    "1",
                    "--acquisitions",
                    "5",
                    "--warm-up",
                    "1",
                    "--rounds",
                    "1",
                    "--no-charts",
                    "--out",
                    out.toString());
        }

        assertThat(cli.exitCode()).as(cli.err()).isZero();
        assertThat(cli.out()).contains("lockctl bench: rediss://").doesNotContain(PASSWORD);
        assertThat(cli.err()).doesNotContain(PASSWORD);
        assertNoFileHolds(out);
        assertThat(workers.seen()).anyMatch(c -> c.contains("BenchWorker")).noneMatch(c -> c.contains(PASSWORD));
    }

    @Test
    void conformance_withALiteralPassword_putsItOnNoWorkersCommandLine() throws Exception {
        CommandLines workers = new CommandLines();
        Cli cli;
        try (workers) {
            cli = Cli.run("conformance", "--store", store(), "--only", "lock_isExclusive_acrossProcesses_theorem1");
        }

        assertThat(cli.exitCode()).as(cli.out() + cli.err()).isZero();
        assertThat(cli.out()).contains("PASS  lock_isExclusive_acrossProcesses_theorem1");
        assertThat(cli.out() + cli.err()).doesNotContain(PASSWORD);
        assertThat(workers.seen()).anyMatch(c -> c.contains("WorkerMain")).noneMatch(c -> c.contains(PASSWORD));
    }

    private static void assertNoFileHolds(Path folder) throws IOException {
        try (Stream<Path> files = Files.walk(folder)) {
            List<Path> all = files.filter(Files::isRegularFile).toList();
            assertThat(all).isNotEmpty();
            for (Path file : all) {
                String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
                assertThat(text).as(file.toString()).doesNotContain(PASSWORD);
            }
        }
    }

    /** The command lines of this JVM's child processes, read from {@code /proc} every few milliseconds until closed. */
    private static final class CommandLines implements AutoCloseable {

        private final Set<String> seen = ConcurrentHashMap.newKeySet();
        private volatile boolean open = true;
        private final Thread sampler = new Thread(this::sample, "command-lines");

        CommandLines() {
            sampler.setDaemon(true);
            sampler.start();
        }

        private void sample() {
            while (open) {
                ProcessHandle.current().descendants().forEach(p -> {
                    try {
                        byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(p.pid()), "cmdline"));
                        seen.add(new String(raw, StandardCharsets.UTF_8).replace('\0', ' '));
                    } catch (IOException exited) {
                        // gone between the listing and the read
                    }
                });
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }

        Set<String> seen() {
            return seen;
        }

        @Override
        public void close() throws InterruptedException {
            open = false;
            sampler.join();
        }
    }
}
