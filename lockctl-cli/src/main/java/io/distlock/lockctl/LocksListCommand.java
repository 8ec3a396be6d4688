package io.distlock.lockctl;

import io.distlock.LockState;
import io.distlock.RemoteLocker;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code lockctl locks list}: every held key of the store's namespace, with its holders. */
@Command(
        name = "list",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Lists every held key of the store with its holders.",
            "Every key under the store's namespace (the URI's path or prefix), one row per holder: key, kind (lock,",
            "read, write, permit), owner label, since, lease ends (relative to now), fencing token, waiting (of the",
            "key). A blank cell: the store keeps no such value. It scans the namespace: see each backend's page for",
            "what that costs. --json: an array of {\"key\", \"holders\": [...], \"waiting\"} objects."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl locks list --store zk://10.0.0.1:2181/locks",
            "  lockctl locks list --json | jq -r '.[] | select(.holders[].ownerLabel | startswith(\"backup\")) | .key'"
        })
final class LocksListCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    LocksStore options;

    @Override
    public Integer call() throws Exception {
        Optional<String> chosen = options.chosen(spec);
        if (chosen.isEmpty()) {
            print(List.of());
            return ExitCodes.OK;
        }
        try (DefaultStore defaults = DefaultStore.unless(chosen.get(), "locks");
                RemoteLocker locker = LocksStore.open(defaults, chosen.get())) {
            print(locker.listHeld());
            return ExitCodes.OK;
        }
    }

    private void print(List<LockState> held) {
        PrintWriter out = spec.commandLine().getOut();
        if (options.json) {
            out.print(LockStateViews.print(LockStateViews.json(held)));
        } else if (held.isEmpty()) {
            out.println("No key is held.");
        } else {
            out.print(LockStateViews.table(held, Instant.now()));
        }
        out.flush();
    }
}
