package io.distlock.lockctl;

import io.distlock.Capabilities.Operation;
import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.RemoteLocker;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl locks break KEY}: deletes the entries of KEY's holders in the store, whichever process holds them,
 * after showing them and asking; the holders are told they lost the lock, the next waiter is granted.
 */
@Command(
        name = "break",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Breaks KEY: deletes its holders' entries, after asking.",
            "As an administrator would, it deletes the entries of its holders (of its lock, read-write lock and",
            "semaphore) in the store, whichever process holds them. Each holder is told it lost the lock (a 'lockctl",
            "run' terminates its command and exits 76) and the next waiter is granted. Meant for a stuck holder: a live",
            "one may be mid-way through the work the lock guards (fencing tokens are for that).",
            "It first shows the holders (on stderr) and asks on the terminal; --yes skips the question, and without a",
            "terminal --yes is required (else exit 2). Prints the holders it deleted; a free key: nothing to break",
            "(exit 0). Answering anything but y exits 1. --json: {\"key\", \"broken\": [holders]}."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl locks break nightly-backup --store zk://10.0.0.1:2181/locks",
            "  lockctl locks break nightly-backup --yes --json   # from a script"
        })
final class LocksBreakCommand implements Callable<Integer> {

    /** The refusal without a terminal to ask at and without {@code --yes}. */
    static final String NO_TERMINAL = "no terminal to ask whether to break '%s': pass --yes to break it without asking";

    @Spec
    CommandSpec spec;

    @Mixin
    LocksStore options;

    @Option(names = "--yes", description = "Break without asking (required without a terminal).")
    boolean yes;

    @Parameters(paramLabel = "KEY", description = "The key, as the application names it.")
    String key;

    @Override
    public Integer call() throws Exception {
        LocksStore.key(spec, key);
        Optional<Terminal> terminal = LockCtl.terminal(spec);
        if (!yes && terminal.isEmpty()) {
            spec.commandLine().getErr().println("lockctl: " + String.format(NO_TERMINAL, key));
            return ExitCodes.USAGE;
        }
        return options.onKey(spec, key, () -> printBroken(List.of()), locker -> breakOn(locker, terminal));
    }

    private int breakOn(RemoteLocker locker, Optional<Terminal> terminal) {
        if (!locker.capabilities().offers(Operation.BREAK)) {
            locker.breakLock(key); // refuses, in the API's words naming what the store offers, and deletes nothing
        }
        if (!yes) {
            Optional<LockState> shown = show(locker);
            if (shown.isPresent() && !shown.get().held()) {
                return printBroken(List.of());
            }
            if (!confirmed(terminal.get(), shown)) {
                spec.commandLine().getErr().println("lockctl: '" + key + "' not broken");
                return ExitCodes.FAILED;
            }
        }
        return printBroken(locker.breakLock(key));
    }

    /** The key's holders, shown on stderr; empty where the store offers no inspection. */
    private Optional<LockState> show(RemoteLocker locker) {
        if (!locker.capabilities().offers(Operation.INSPECT)) {
            return Optional.empty();
        }
        LockState state = locker.inspect(key);
        if (state.held()) {
            PrintWriter err = spec.commandLine().getErr();
            err.print(LockStateViews.table(List.of(state), Instant.now()));
            err.flush();
        }
        return Optional.of(state);
    }

    /** Whether the person at the terminal answers yes to breaking the holders {@code shown}. */
    private boolean confirmed(Terminal terminal, Optional<LockState> shown) {
        String whom = shown.map(state -> state.holders().size())
                .map(n -> ", deleting the " + (n == 1 ? "holder" : n + " holders") + " above")
                .orElse(" (this store cannot show its holders first)");
        String answer = terminal.ask("Break '" + key + "'" + whom + "? [y/N] ");
        return answer != null && List.of("y", "yes").contains(answer.strip().toLowerCase(Locale.ROOT));
    }

    private int printBroken(List<LockHolder> broken) {
        PrintWriter out = spec.commandLine().getOut();
        if (options.json) {
            out.print(LockStateViews.print(LockStateViews.outcome(key, "broken", broken)));
        } else if (broken.isEmpty()) {
            out.println("'" + key + "' was free: nothing broken.");
        } else {
            out.println("Broke '" + key + "': deleted the entries of");
            out.print(LockStateViews.table(key, broken));
        }
        out.flush();
        return ExitCodes.OK;
    }
}
