package io.distlock.lockctl;

import io.distlock.LockHolder;
import io.distlock.RemoteLocker;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl locks request-release KEY}: asks KEY's holders, whichever process holds them, to let go
 * ({@link RemoteLocker#requestRelease}); each holder decides, nothing is deleted.
 */
@Command(
        name = "request-release",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Asks KEY's holders to let go; each holder decides.",
            "Reaches the holders of its lock, read-write lock and semaphore, whichever process holds them, and runs",
            "their release-request listeners (RemoteLock.onReleaseRequested). The holder decides: one that listens",
            "may finish or abandon its work and release (a 'lockctl run --on-release-request=terminate' terminates",
            "its command and exits 77); one that does not listen keeps its lock (a 'lockctl run' by default). Nothing",
            "is deleted, so nothing is asked first: to take a key from a stuck holder, 'locks break'. Prints the",
            "holders asked; a free key: nothing to ask (exit 0). --json: {\"key\", \"asked\": [holders]}."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl locks request-release nightly-backup --store zk://10.0.0.1:2181/locks",
            "  lockctl locks request-release nightly-backup --json | jq '.asked | length'"
        })
final class LocksRequestReleaseCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    LocksStore options;

    @Parameters(paramLabel = "KEY", description = "The key, as the application names it.")
    String key;

    @Override
    public Integer call() throws Exception {
        // a store that cannot reach a holder refuses, naming what it offers (exit 2)
        return options.onKey(spec, key, () -> printAsked(List.of()), locker -> printAsked(locker.requestRelease(key)));
    }

    private int printAsked(List<LockHolder> asked) {
        PrintWriter out = spec.commandLine().getOut();
        if (options.json) {
            out.print(LockStateViews.print(LockStateViews.outcome(key, "asked", asked)));
        } else if (asked.isEmpty()) {
            out.println("'" + key + "' is free: nothing to ask.");
        } else {
            out.println("Asked the holders of '" + key + "' to let go (each decides whether to):");
            out.print(LockStateViews.table(key, asked));
        }
        out.flush();
        return ExitCodes.OK;
    }
}
