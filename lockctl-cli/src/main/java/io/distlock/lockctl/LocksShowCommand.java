package io.distlock.lockctl;

import io.distlock.LockState;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code lockctl locks show KEY}: who holds one key, and how many wait. */
@Command(
        name = "show",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Shows who holds KEY and how many wait.",
            "The holders of its lock, read-write lock and semaphore, read from the store: the table of 'locks list'",
            "for one key, or that it is free (exit 0 either way). --json: one {\"key\", \"holders\": [...],",
            "\"waiting\"} object; a free key has \"holders\": []."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl locks show nightly-backup --store etcd://127.0.0.1:2379/locks",
            "  lockctl locks show nightly-backup --json | jq '.holders | length'"
        })
final class LocksShowCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    LocksStore options;

    @Parameters(paramLabel = "KEY", description = "The key, as the application names it.")
    String key;

    @Override
    public Integer call() throws Exception {
        return options.onKey(
                spec,
                key,
                () -> print(new LockState(key, List.of(), OptionalInt.of(0))),
                locker -> print(locker.inspect(key)));
    }

    private int print(LockState state) {
        PrintWriter out = spec.commandLine().getOut();
        if (options.json) {
            out.print(LockStateViews.print(LockStateViews.json(state)));
        } else if (!state.held()) {
            out.println(free(state));
        } else {
            out.print(LockStateViews.table(List.of(state), Instant.now()));
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** {@code 'k' is free.}, with how many wait where the store says and some do (a grant is on its way). */
    static String free(LockState state) {
        int waiting = state.waiting().orElse(0);
        return "'" + state.key() + "' is free" + (waiting > 0 ? " (" + waiting + " waiting)." : ".");
    }
}
