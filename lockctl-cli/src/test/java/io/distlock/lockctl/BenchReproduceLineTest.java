package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The report's "Reproduce" line must read back, word for word, when pasted into a shell. */
class BenchReproduceLineTest {

    @Test
    void shellWord_plainWords_stayAsTheyAre() {
        assertThat(BenchCommand.shellWord("--store")).isEqualTo("--store");
        assertThat(BenchCommand.shellWord("zk://127.0.0.1:2181/bench")).isEqualTo("zk://127.0.0.1:2181/bench");
        assertThat(BenchCommand.shellWord("1,3,5")).isEqualTo("1,3,5");
    }

    @Test
    void shellWord_uriWithQueryAndQuotes_readsBackThroughAShellUnchanged() throws Exception {
        List<String> words = List.of(
                "cassandra://127.0.0.1:9042/ks?localDatacenter=dc1&algorithm=legacy",
                "peer:curator://h:2181/a b",
                "it's",
                "$HOME*",
                "");
        StringBuilder script = new StringBuilder("printf '%s\\n'");
        for (String word : words) {
            script.append(' ').append(BenchCommand.shellWord(word));
        }
        assertThat(runShell(script.toString())).containsExactlyElementsOf(words);
    }

    private static List<String> runShell(String script) throws IOException, InterruptedException {
        Process shell =
                new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
        String out = new String(shell.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(shell.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(shell.exitValue()).as(out).isZero();
        List<String> lines = new ArrayList<>(List.of(out.split("\n", -1)));
        lines.remove(lines.size() - 1); // the newline after the last word
        return lines;
    }
}
