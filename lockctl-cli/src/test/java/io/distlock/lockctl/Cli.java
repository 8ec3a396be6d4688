package io.distlock.lockctl;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

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

    /**
     * Starts lockctl on a thread of its own (not a shared pool's), with an empty environment; what it prints on stderr
     * can be read while it runs.
     */
    static Running start(String... args) {
        StringWriter err = new StringWriter();
        CompletableFuture<Cli> done = new CompletableFuture<>();
        Thread thread = new Thread(
                () -> {
                    try {
                        done.complete(run(Map.of(), Optional.empty(), err, args));
                    } catch (Throwable t) {
                        done.completeExceptionally(t);
                    }
                },
                "lockctl " + String.join(" ", args));
        thread.setDaemon(true);
        thread.start();
        return new Running(done, err);
    }

    /** A lockctl started by {@link #start}: its outcome, and its stderr so far. */
    record Running(CompletableFuture<Cli> done, StringWriter errWriter) {
        /** What it printed on stderr so far. */
        String err() {
            return errWriter.toString();
        }
    }

    private static Cli run(Map<String, String> env, Optional<Terminal> terminal, String... args) {
        return run(env, terminal, new StringWriter(), args);
    }

    private static Cli run(Map<String, String> env, Optional<Terminal> terminal, StringWriter err, String... args) {
        StringWriter out = new StringWriter();
        int code = LockCtl.commandLine(new PrintWriter(out, true), new PrintWriter(err, true), env, terminal)
                .execute(args);
        return new Cli(code, out.toString(), err.toString());
    }
}
