package io.distlock.lockctl;

import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.Lockable;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.DurationText;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Runs a command while holding a lock, like {@code flock(1)} across machines: waits for the lock, runs the command,
 * returns its exit code, releases the lock in every case. Terminates the command if the lock is lost. Instead of the
 * lock it can take the read or the write side of the key's read-write lock, or one of the permits of its semaphore.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs COMMAND while holding the lock on --key, like flock(1) across machines, and exits with its code.",
            "SIGINT and SIGTERM are forwarded to the command. If the lock is lost while it runs, the command is",
            "terminated (SIGTERM, then SIGKILL after --grace) and lockctl exits with 76. The lock is released in",
            "every case. The command sees DISTLOCK_KEY, DISTLOCK_OWNER_ID and, where the store gives one,",
            "DISTLOCK_FENCING_TOKEN (pass it to the resource you guard).",
            "Instead of the lock, --read and --write take a side of the key's read-write lock (readers run together,",
            "a writer alone) and --permits N one of the N permits of its semaphore (at most N commands run at once:",
            "limiting how many hosts run a job at the same time is a common use). The lock, the read-write lock and",
            "the semaphore on one key are separate: they never exclude each other.",
            "When somebody asks the holder to let go ('lockctl locks request-release'), lockctl says so on stderr and,",
            "by default, keeps the lock and the command running; --on-release-request=terminate terminates the",
            "command as on a lost lock, releases the lock and exits 77."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl run --store zk://10.0.0.1:2181/locks --key nightly-backup -- ./backup.sh --full",
            "  lockctl run --store zk://10.0.0.1:2181/locks --key nightly-backup --owner \"backup on $(hostname)\""
                    + " -- ./backup.sh   # shown by lockctl locks",
            "  lockctl run --store etcd://127.0.0.1:2379/locks --key deploy --wait 0 -- make deploy   # 75 if busy",
            "  lockctl run --store redis://127.0.0.1:6379 --key report --wait 5m -- sh -c 'echo $DISTLOCK_FENCING_TOKEN'",
            "  lockctl run --store zk://10.0.0.1:2181/locks --key nightly-import --permits 3 --wait 1h -- ./import.sh"
                    + "   # at most 3 hosts",
            "  lockctl run --key reindex --on-release-request=terminate -- ./reindex.sh   # exits 77 when asked to let go",
            "  lockctl run --store etcd://127.0.0.1:2379/locks --key ledger --lock-delay 5s -- ./post-ledger.sh",
            "  lockctl run --store etcd://127.0.0.1:2379/locks --key catalog --read -- ./export.sh      # beside other readers",
            "  lockctl run --store etcd://127.0.0.1:2379/locks --key catalog --write -- ./reindex.sh   # alone"
        })
final class RunCommand implements Callable<Integer> {

    /** Environment variable: the locked key. */
    static final String KEY_VARIABLE = "DISTLOCK_KEY";
    /** Environment variable: the fencing token, where the store gives one. */
    static final String TOKEN_VARIABLE = "DISTLOCK_FENCING_TOKEN";
    /** Environment variable: the owner id of this acquisition. */
    static final String OWNER_VARIABLE = "DISTLOCK_OWNER_ID";

    /** The warning of a run on the embedded default, which no other lockctl sees. */
    static final String PRIVATE_STORE = "lockctl: no --store or DISTLOCK_STORE: this lock is on a ZooKeeper inside this"
            + " lockctl and excludes no other; to share one, run 'lockctl store' in another terminal and the"
            + " 'export DISTLOCK_STORE=...' line it prints here";

    /** The warning of a run on a store URI whose host is {@code embedded}: as private as the default. */
    static final String PRIVATE_EMBEDDED = "lockctl: the host 'embedded' names a ZooKeeper inside this lockctl: this"
            + " lock excludes no other; to share one, run 'lockctl store' in another terminal and the"
            + " 'export DISTLOCK_STORE=...' line it prints here";

    /** The warning of a run on a store URI whose host is {@code process}: a server of the command's own. */
    static final String PRIVATE_PROCESS = "lockctl: the host 'process' names a ZooKeeper this lockctl starts for itself"
            + " and stops when it ends: this lock excludes no other; to share one, run 'lockctl store' in another"
            + " terminal and the 'export DISTLOCK_STORE=...' line it prints here";

    @Spec
    CommandSpec spec;

    @Option(
            names = "--store",
            paramLabel = "URI",
            description = "Lock store URI (default: $DISTLOCK_STORE if set, else an embedded ZooKeeper, which locks"
                    + " within this lockctl only: run 'lockctl store' to share one).")
    String store;

    @Option(names = "--key", required = true, description = "The key to lock.")
    String key;

    @Option(
            names = "--owner",
            paramLabel = "LABEL",
            description = "Who holds the lock, for 'lockctl locks' and the store's own tools (default: pid@host): a"
                    + " job and host name, say. Stored in the clear with every entry.")
    String owner;

    @Option(
            names = "--read",
            description = "Take the read side of the read-write lock on --key instead of the lock: any number of"
                    + " commands hold it at once, never beside a writer.")
    boolean read;

    @Option(
            names = "--write",
            description = "Take the write side of the read-write lock on --key instead of the lock: held alone,"
                    + " excluding every reader and writer; on a fair store it goes before readers that come after it.")
    boolean write;

    @Option(
            names = "--permits",
            paramLabel = "N",
            description = "Take one of the N permits of the semaphore on --key instead of the lock: at most N commands"
                    + " run at once (a common use: limiting how many hosts run a job at the same time). Everyone"
                    + " using the semaphore must give the same N.")
    Integer permits;

    @Option(
            names = "--wait",
            defaultValue = "30s",
            converter = DurationConverter.class,
            description = "How long to wait for the lock; 0 = one attempt, exit 75 at once if busy"
                    + " (default: ${DEFAULT-VALUE}).")
    Duration wait;

    @Option(
            names = "--grace",
            defaultValue = "10s",
            converter = DurationConverter.class,
            description = "After the lock is lost (or, with --on-release-request=terminate, a request to let go): time"
                    + " between SIGTERM and SIGKILL (default: ${DEFAULT-VALUE}).")
    Duration grace;

    @Option(
            names = "--on-release-request",
            paramLabel = "ignore|terminate",
            defaultValue = "ignore",
            converter = OnReleaseRequest.Converter.class,
            description = "What to do when somebody asks this holder to let go ('lockctl locks request-release'):"
                    + " ignore keeps the lock and the command running, as any holder that does not listen does;"
                    + " terminate terminates the command as on a lost lock (SIGTERM, then SIGKILL after --grace),"
                    + " releases the lock and exits 77. Either way lockctl says on stderr that it was asked"
                    + " (default: ${DEFAULT-VALUE}).")
    OnReleaseRequest onReleaseRequest;

    @Option(
            names = "--lock-delay",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Keep the key from everyone for DURATION after the lease when this holder ends without a"
                    + " release (lockctl killed, frozen or cut off from the store); a release frees it at once. It"
                    + " gives a frozen holder time to notice it lost the lock before the next one writes. Keep it a"
                    + " small part of the lease. A store that cannot keep it exits 2 (default: none; the same as the"
                    + " URI option lockDelay).")
    Duration lockDelay;

    @Parameters(paramLabel = "COMMAND", arity = "0..*", description = "The command and its arguments, after --.")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (command.isEmpty()) {
            throw new ParameterException(
                    spec.commandLine(), "Missing command: give it after --, e.g. lockctl run --key k -- ./job.sh");
        }
        if (wait.isNegative()) {
            throw new ParameterException(spec.commandLine(), "--wait must not be negative");
        }
        LockKind kind = kind();
        RemoteLockerBuilder builder = RemoteLockers.builder();
        if (owner != null) {
            builder.ownerLabel(owner);
        }
        if (lockDelay != null) {
            builder.lockDelay(lockDelay); // a store that cannot keep it refuses at build() (exit 2)
        }
        PrintWriter err = spec.commandLine().getErr();
        String chosen = DefaultStore.chosen(store, LockCtl.env(spec));
        if (chosen == null) {
            err.println(PRIVATE_STORE);
        } else if (DefaultStore.namesEmbedded(chosen)) {
            err.println(PRIVATE_EMBEDDED);
        } else if (DefaultStore.namesProcess(chosen)) {
            err.println(PRIVATE_PROCESS);
        }
        try (DefaultStore defaults = DefaultStore.unless(chosen, "run");
                RemoteLocker locker = builder.uri(defaults.uri(chosen)).build()) {
            Optional<RemoteLock> taken = take(locker, kind);
            if (taken.isEmpty()) {
                err.println("lockctl: " + busy(kind)
                        + (wait.isZero()
                                ? " (--wait 0: one attempt)"
                                : " and was not granted within " + DurationText.of(wait)));
                return ExitCodes.BUSY;
            }
            try (RemoteLock lock = taken.get()) {
                return runHolding(lock, held(kind), err);
            }
        }
    }

    /** What the options ask for: the lock unless one of --read, --write, --permits is given; at most one is. */
    private LockKind kind() {
        List<String> given = new ArrayList<>();
        if (read) {
            given.add("--read");
        }
        if (write) {
            given.add("--write");
        }
        if (permits != null) {
            given.add("--permits");
        }
        if (given.size() > 1) {
            throw new ParameterException(
                    spec.commandLine(),
                    String.join(" and ", given) + " exclude each other: give one of --read, --write, --permits N,"
                            + " or none for the lock");
        }
        if (permits != null && permits < 1) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--permits must be at least 1 (how many commands may run at once), not " + permits);
        }
        return read ? LockKind.READ : write ? LockKind.WRITE : permits != null ? LockKind.PERMIT : LockKind.LOCK;
    }

    private Optional<RemoteLock> take(RemoteLocker locker, LockKind kind) throws InterruptedException {
        if (kind == LockKind.LOCK) {
            if (wait.isZero()) {
                return locker.tryLock(key);
            }
            try {
                return Optional.of(locker.lock(key, wait));
            } catch (LockTimeoutException e) {
                return Optional.empty();
            }
        }
        Lockable lockable =
                switch (kind) {
                    case READ -> locker.readWriteLock(key).readLock();
                    case WRITE -> locker.readWriteLock(key).writeLock();
                    default -> locker.semaphore(key, permits);
                };
        if (wait.isZero()) {
            return lockable.tryLock();
        }
        try {
            return Optional.of(lockable.lock(wait));
        } catch (LockTimeoutException e) {
            return Optional.empty();
        }
    }

    /** Why a grant of {@code kind} was not had, for the one-line message. */
    private String busy(LockKind kind) {
        return switch (kind) {
            case READ -> "the read lock on '" + key + "' is held or awaited by a writer";
            case WRITE -> "the write lock on '" + key + "' is held by readers or another writer";
            case PERMIT -> "all " + permits + " permits of the semaphore '" + key + "' are held";
            default -> "the lock on '" + key + "' is held by someone else";
        };
    }

    /** What was held, for messages: {@code the lock on 'k'}, {@code the read lock on 'k'}, {@code a permit of 'k'}. */
    private String held(LockKind kind) {
        return switch (kind) {
            case READ -> "the read lock on '" + key + "'";
            case WRITE -> "the write lock on '" + key + "'";
            case PERMIT -> "the permit of the semaphore '" + key + "'";
            default -> "the lock on '" + key + "'";
        };
    }

    private int runHolding(RemoteLock lock, String what, PrintWriter err) throws InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        Map<String, String> env = builder.environment();
        env.put(KEY_VARIABLE, key);
        env.put(OWNER_VARIABLE, lock.ownerId());
        lock.fencingToken().ifPresent(token -> env.put(TOKEN_VARIABLE, Long.toString(token)));
        // handlers first, so that a signal arriving while the command starts is not lost
        ChildSignals signals = new ChildSignals();
        Map<Signal, SignalHandler> previous = signals.install();
        Process child;
        try {
            child = builder.start();
        } catch (IOException e) {
            previous.forEach(Signal::handle);
            boolean missing = e.getMessage() != null && e.getMessage().contains("error=2,");
            err.println("lockctl: cannot run '" + command.get(0) + "': "
                    + (missing ? "command not found" : e.getMessage()));
            return missing ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
        }
        signals.started(child);
        AtomicReference<Stop> stopped = new AtomicReference<>();
        lock.onLost(l -> stop(child, stopped, Stop.LOST));
        // registered after the start: a request that came before is heard at once
        lock.onReleaseRequested(l -> {
            err.println("lockctl: asked to let go of " + what + "; "
                    + (onReleaseRequest == OnReleaseRequest.TERMINATE
                            ? "terminating the command (--on-release-request=terminate)"
                            : "keeping it, the command goes on (--on-release-request=ignore)"));
            if (onReleaseRequest == OnReleaseRequest.TERMINATE) {
                stop(child, stopped, Stop.ASKED);
            }
        });
        try {
            int code = child.waitFor();
            Stop stop = stopped.get();
            if (stop == Stop.LOST) {
                err.println("lockctl: " + what + " was lost while the command ran; the command was"
                        + " terminated (it exited with " + code + ")");
                return ExitCodes.LOCK_LOST;
            }
            if (stop == Stop.ASKED) {
                err.println("lockctl: asked to let go of " + what + ": the command was terminated (it exited with "
                        + code + "); releasing the lock");
                return ExitCodes.RELEASE_REQUESTED;
            }
            return code;
        } finally {
            previous.forEach(Signal::handle);
        }
    }

    /** Why lockctl terminated the command. */
    private enum Stop {
        /** The lock was lost. */
        LOST,
        /** Somebody asked the holder to let go, and {@code --on-release-request=terminate}. */
        ASKED
    }

    /**
     * Terminates the command for {@code why}, once. A loss overrides a request being honoured (the command may then
     * have run without the lock, which the exit code must say); a request after a loss, or after the command ended by
     * itself, changes nothing.
     */
    private void stop(Process child, AtomicReference<Stop> stopped, Stop why) {
        if (why == Stop.ASKED && !child.isAlive()) {
            return; // the command ended by itself: its own exit code stands
        }
        Stop before = why == Stop.LOST ? stopped.getAndSet(Stop.LOST) : stopped.compareAndExchange(null, why);
        if (before == null) {
            terminate(child);
        }
    }

    /** SIGTERM now, SIGKILL after the grace period if the command is still running. */
    private void terminate(Process child) {
        child.destroy();
        Thread killer = new Thread(
                () -> {
                    try {
                        if (!child.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                            child.destroyForcibly();
                        }
                    } catch (InterruptedException e) {
                        child.destroyForcibly();
                    }
                },
                "lockctl-terminate");
        killer.setDaemon(true);
        killer.start();
    }

    /** {@code --on-release-request}: what a holder asked to let go does. */
    enum OnReleaseRequest {
        /** Keeps the lock and the command running: the API's rule for a holder that does not listen. */
        IGNORE,
        /** Terminates the command as on a lost lock, releases the lock, exits {@value ExitCodes#RELEASE_REQUESTED}. */
        TERMINATE;

        /** Reads {@code ignore} and {@code terminate}, as the help writes them. */
        static final class Converter implements ITypeConverter<OnReleaseRequest> {
            @Override
            public OnReleaseRequest convert(String value) {
                for (OnReleaseRequest choice : values()) {
                    if (choice.name().equalsIgnoreCase(value.strip())) {
                        return choice;
                    }
                }
                throw new TypeConversionException("'" + value + "' is neither ignore nor terminate");
            }
        }
    }

    /** Passes SIGINT and SIGTERM on to the command; lockctl itself keeps running until the command exits. */
    private static final class ChildSignals {
        private Process child;
        private String pending;

        Map<Signal, SignalHandler> install() {
            Map<Signal, SignalHandler> previous = new HashMap<>();
            for (String name : List.of("INT", "TERM")) {
                try {
                    Signal signal = new Signal(name);
                    previous.put(signal, Signal.handle(signal, s -> forward(s.getName())));
                } catch (IllegalArgumentException unsupported) {
                    // e.g. a JVM run with -Xrs; the command then gets only what its process group gets
                }
            }
            return previous;
        }

        synchronized void started(Process started) {
            child = started;
            if (pending != null) {
                send(child, pending);
            }
        }

        private synchronized void forward(String signal) {
            if (child == null) {
                pending = signal;
            } else {
                send(child, signal);
            }
        }
    }

    private static void send(Process child, String signal) {
        try {
            new ProcessBuilder("kill", "-" + signal, Long.toString(child.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
        } catch (IOException e) {
            child.destroy();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
