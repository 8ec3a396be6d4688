package io.distlock.lockctl;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code lockctl locks}: who holds which key of a store, asking a key's holders to let go, and breaking a stuck holder's
 * lock.
 */
@Command(
        name = "locks",
        mixinStandardHelpOptions = true,
        description = {
            "Shows who holds a store's keys; asks their holders to let go, or breaks a stuck holder's lock.",
            "Read from the store itself, so every process's holds are shown. The owner is the holder's owner label",
            "(lockctl run --owner; in code RemoteLockerBuilder.ownerLabel; default pid@host). 'list' scans the",
            "store's namespace (the URI's path or prefix): what that costs on each store is on its backend's page.",
            "'request-release' asks a key's holders to let go and leaves the decision to them; 'break' deletes their",
            "entries. A store that does not offer inspection, asking or breaking exits 2 naming what it offers.",
            "The table shows times relative to now ('3m12s ago', 'in 12s'); --json gives ISO-8601 UTC instants.",
            "SINCE is when the store created the holder's entry (for one that queued first: its arrival). Blank",
            "cells and JSON nulls: a value the store does not keep (on ZooKeeper no lease end: the session is the",
            "lease). What each store keeps, and what a listing costs there: docs/operations.md."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  export DISTLOCK_STORE=zk://10.0.0.1:2181/locks",
            "  lockctl locks list",
            "  KEY             KIND  OWNER           SINCE      LEASE ENDS  FENCING TOKEN  WAITING",
            "  nightly-backup  lock  backup on db-7  3m12s ago              41             1",
            "  lockctl locks show nightly-backup --json   # {\"key\":..., \"holders\":[...], \"waiting\":...}",
            "  lockctl locks request-release nightly-backup   # asks its holders to let go; they decide",
            "  lockctl locks break nightly-backup         # shows its holders, asks, deletes them",
            "  lockctl locks break nightly-backup --yes   # without asking (scripts: required without a terminal)"
        },
        subcommands = {
            LocksListCommand.class,
            LocksShowCommand.class,
            LocksRequestReleaseCommand.class,
            LocksBreakCommand.class
        })
final class LocksCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(
                spec.commandLine(),
                "Missing subcommand: give list, show KEY, request-release KEY or break KEY, e.g. lockctl locks list");
    }
}
