package io.distlock.lockctl;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.Optional;

/** Runs lockctl in this JVM, with no terminal attached unless given one, and keeps what it printed. */
record Cli(int exitCode, String out, String err) {

    /** Runs lockctl with an empty environment: no DISTLOCK_STORE of the machine's reaches the test. */
    static Cli run(String... args) {
        return run(Map.of(), args);
    }

    /** Runs lockctl with {@code env} as its environment. */
    static Cli run(Map<String, String> env, String... args) {
        return run(env, Optional.empty(), args);
    }

    /** Runs lockctl at {@code terminal}, with an empty environment. */
    static Cli runAt(Terminal terminal, String... args) {
        return run(Map.of(), Optional.of(terminal), args);
    }

    private static Cli run(Map<String, String> env, Optional<Terminal> terminal, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = LockCtl.commandLine(new PrintWriter(out, true), new PrintWriter(err, true), env, terminal)
                .execute(args);
        return new Cli(code, out.toString(), err.toString());
    }
}
