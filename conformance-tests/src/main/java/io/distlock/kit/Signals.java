package io.distlock.kit;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * POSIX signals to a process by pid, for fault tests: freeze ({@code SIGSTOP}), thaw ({@code SIGCONT}) and kill
 * ({@code SIGKILL}) a store node or a worker JVM. Uses the {@code kill} command, present on every POSIX system.
 */
public final class Signals {

    private Signals() {}

    /** Freezes the process: it keeps its sockets but runs no instruction until {@link #resume}. */
    public static void pause(long pid) {
        send("STOP", pid);
    }

    /** Thaws a process frozen by {@link #pause}. */
    public static void resume(long pid) {
        send("CONT", pid);
    }

    /** Kills the process at once, without letting it clean up (no shutdown hooks, no release of locks). */
    public static void kill(long pid) {
        send("KILL", pid);
    }

    private static void send(String signal, long pid) {
        try {
            Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pid + " did not finish in 10 s");
            }
            if (p.exitValue() != 0) {
                String out = new String(p.getInputStream().readAllBytes()).trim();
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + out);
            }
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run kill -" + signal + " " + pid + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted sending SIG" + signal + " to " + pid, e);
        }
    }
}
