package io.distlock.lockctl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DemoCommandTest {

    private static final Pattern FINAL = Pattern.compile("paid out: (\\d+), final balance: (-?\\d+)");

    @Test
    void demo_underTheLock_neverOverdraws() {
        String out = run("demo", "--atms", "3", "--withdrawals", "4", "--think", "5ms");
        assertThat(out).contains("OK: the balance never went below zero");
        assertThat(figures(out)).containsExactly(150, 50);
        assertThat(out).containsPattern("ATM-\\d\\s+\\(token \\d+\\)");
    }

    @Test
    void demo_withoutTheLock_showsTheRace() {
        String out = run("demo", "--no-lock", "--atms", "2", "--withdrawals", "2", "--think", "200ms");
        assertThat(out).contains("RACE");
        assertThat(figures(out)[0]).as("paid out more than the account held").isGreaterThan(200);
    }

    @Test
    void demo_badArguments_areRejected() {
        StringWriter err = new StringWriter();
        CommandLine cl =
                new CommandLine(new LockCtl(Map.of(), Optional.empty())); // never the developer's DISTLOCK_STORE
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("demo", "--atms", "0")).isNotZero();
        assertThat(err.toString()).contains("must be positive");
        assertThat(cl.execute("demo", "--think", "soon")).isNotZero();
        assertThat(err.toString()).contains("is not a duration");
    }

    private static String run(String... args) {
        StringWriter out = new StringWriter();
        CommandLine cl =
                new CommandLine(new LockCtl(Map.of(), Optional.empty())); // never the developer's DISTLOCK_STORE
        cl.setOut(new PrintWriter(out));
        assertThat(cl.execute(args)).isZero();
        return out.toString();
    }

    /** Paid out and final balance, from the summary line. */
    private static int[] figures(String out) {
        Matcher m = FINAL.matcher(out);
        assertThat(m.find()).as("summary line in:%n%s", out).isTrue();
        return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
    }
}
