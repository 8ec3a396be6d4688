package io.distlock.lockctl;

import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.util.Optional;
import java.util.function.IntSupplier;
import java.util.function.ToIntFunction;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The options every {@code lockctl locks} command takes: the store, and JSON instead of the table. */
final class LocksStore {

    /** The warning of a {@code locks} command on the embedded default, whose fresh ZooKeeper no other lockctl sees. */
    static final String PRIVATE_STORE = "lockctl: no --store or DISTLOCK_STORE: nothing to show, as a lockctl without a"
            + " store locks on a ZooKeeper of its own that no other lockctl sees; give the store with --store or"
            + " DISTLOCK_STORE ('lockctl store' in another terminal prints the export line of a shared one)";

    @Option(
            names = "--store",
            paramLabel = "URI",
            description = "Lock store URI (default: $DISTLOCK_STORE). Without either there is nothing to show: each"
                    + " lockctl without a store has a ZooKeeper of its own.")
    String store;

    @Option(
            names = "--json",
            description = "JSON for scripts instead of the table (the shape is in docs/lockctl.md; ISO-8601 UTC times,"
                    + " null where the store keeps no such value).")
    boolean json;

    /**
     * The store's URI: {@code --store}, else {@value DefaultStore#VARIABLE}; empty when neither is given, after saying
     * on stderr that there is nothing to show. (Starting the embedded ZooKeeper for the command would only show it
     * empty, a few seconds later.)
     */
    Optional<String> chosen(CommandSpec spec) {
        String chosen = DefaultStore.chosen(store, LockCtl.env(spec));
        if (chosen == null) {
            spec.commandLine().getErr().println(PRIVATE_STORE);
        }
        return Optional.ofNullable(chosen);
    }

    /**
     * What a {@code locks} command on one key does: checks {@code key}, then applies {@code action} to a locker on the
     * chosen store and returns its exit code; where no store is chosen, says so on stderr ({@link #chosen}) and returns
     * {@code none}'s.
     */
    int onKey(CommandSpec spec, String key, IntSupplier none, ToIntFunction<RemoteLocker> action) throws Exception {
        key(spec, key);
        Optional<String> chosen = chosen(spec);
        if (chosen.isEmpty()) {
            return none.getAsInt();
        }
        try (DefaultStore defaults = DefaultStore.unless(chosen.get(), "locks");
                RemoteLocker locker = open(defaults, chosen.get())) {
            return action.applyAsInt(locker);
        }
    }

    /** Opens a locker on {@code uri}, a URI {@link #chosen} gave, resolved by {@code defaults}. */
    static RemoteLocker open(DefaultStore defaults, String uri) {
        return RemoteLockers.open(defaults.uri(uri));
    }

    /**
     * {@code key}, checked not to be blank before any store is asked (the locker checks it again, with its length).
     *
     * @throws ParameterException if blank
     */
    static String key(CommandSpec spec, String key) {
        if (key.isBlank()) {
            throw new ParameterException(spec.commandLine(), "KEY must not be blank, got '" + key + "'");
        }
        return key;
    }
}
