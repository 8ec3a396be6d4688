package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** {@code lockctl bench} runs that must succeed, and the report they write, for the bench tests. */
final class BenchRuns {

    private BenchRuns() {}

    /** Runs {@code lockctl bench ARGS --out OUT} and checks that it succeeded. */
    static Cli bench(Path out, String... args) {
        List<String> command = new ArrayList<>(List.of("bench"));
        command.addAll(List.of(args));
        command.addAll(List.of("--out", out.toString()));
        Cli cli = Cli.run(command.toArray(String[]::new));
        assertThat(cli.exitCode()).as(cli.err()).isZero();
        return cli;
    }

    /** Runs {@code lockctl ARGS} and checks that it was refused with the usage exit code and {@code message}. */
    static void assertRefused(String message, String... args) {
        Cli cli = Cli.run(args);
        assertThat(cli.exitCode()).as(cli.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains(message);
    }

    /** The {@code bench.json} a run wrote into {@code out}. */
    static JsonNode report(Path out) throws IOException {
        return new ObjectMapper().readTree(out.resolve("bench.json").toFile());
    }
}
