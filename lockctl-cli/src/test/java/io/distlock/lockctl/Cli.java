package io.distlock.lockctl;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs lockctl in this JVM and keeps what it printed. */
record Cli(int exitCode, String out, String err) {

    static Cli run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = LockCtl.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(args);
        return new Cli(code, out.toString(), err.toString());
    }
}
