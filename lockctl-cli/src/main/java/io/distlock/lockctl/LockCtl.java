package io.distlock.lockctl;

import io.distlock.lockctl.bench.Errors;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** The {@code lockctl} command line. */
@Command(
        name = "lockctl",
        mixinStandardHelpOptions = true,
        versionProvider = LockCtl.Version.class,
        description =
                "Distributed locks from the command line: benchmark a store, run a command under a lock,"
                        + " see and break who holds a store's keys, check a store with the conformance kit, run a store to share.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl bench          # seed 000's experiment on an embedded ZooKeeper",
            "  lockctl bench --store zk://127.0.0.1:2181/locks --store memory: --rounds 5",
            "  lockctl run --store zk://127.0.0.1:2181/locks --key backup -- ./backup.sh",
            "  lockctl locks list --store zk://127.0.0.1:2181/locks     # who holds what; locks break KEY to free one",
            "  lockctl conformance --store zk://127.0.0.1:2181/kit",
            "  lockctl store          # a store for the commands of other terminals; prints their export line",
            "  lockctl demo",
            "  lockctl time-service --store cassandra://127.0.0.1:9042/locks",
        },
        subcommands = {
            BenchCommand.class,
            RunCommand.class,
            LocksCommand.class,
            ConformanceCommand.class,
            DemoCommand.class,
            TimeServiceCommand.class,
            StoreCommand.class,
            CommandLine.HelpCommand.class
        })
public final class LockCtl {

    @Option(
            names = "--verbose",
            scope = ScopeType.INHERIT,
            description = "Show the stack trace of an error (default: one line).")
    boolean verbose;

    /** The environment the commands read {@value DefaultStore#VARIABLE} from. */
    private final Map<String, String> env;

    /** Where {@code locks break} asks; empty without a terminal. */
    private final Optional<Terminal> terminal;

    LockCtl() {
        this(System.getenv(), Terminal.system());
    }

    LockCtl(Map<String, String> env, Optional<Terminal> terminal) {
        this.env = Map.copyOf(env);
        this.terminal = terminal;
    }

    /** The environment of the {@code lockctl} command line {@code spec} belongs to. */
    static Map<String, String> env(CommandSpec spec) {
        return ((LockCtl) spec.root().userObject()).env;
    }

    /** The terminal of the {@code lockctl} command line {@code spec} belongs to; empty if none is attached. */
    static Optional<Terminal> terminal(CommandSpec spec) {
        return ((LockCtl) spec.root().userObject()).terminal;
    }

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        ProcessLogging.routeJavaUtilLogging();
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit status (for tests). */
    static int run(String... args) {
        return commandLine(new PrintWriter(System.out, true), new PrintWriter(System.err, true))
                .execute(args);
    }

    /** The command line writing to {@code out} and {@code err}, with lockctl's error handling. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        return commandLine(out, err, System.getenv());
    }

    /** The same, its commands reading {@value DefaultStore#VARIABLE} from {@code env} (for tests). */
    static CommandLine commandLine(PrintWriter out, PrintWriter err, Map<String, String> env) {
        return commandLine(out, err, env, Terminal.system());
    }

    /** The same, {@code locks break} asking at {@code terminal} (for tests). */
    static CommandLine commandLine(
            PrintWriter out, PrintWriter err, Map<String, String> env, Optional<Terminal> terminal) {
        LockCtl root = new LockCtl(env, terminal);
        CommandLine cli = new CommandLine(root);
        cli.setOut(out);
        cli.setErr(err);
        cli.setUsageHelpWidth(110);
        cli.setParameterExceptionHandler((e, args) -> {
            CommandLine failed = e.getCommandLine();
            failed.getErr().println("lockctl: " + e.getMessage().replaceAll("\\s*\\R\\s*", " "));
            failed.getErr().println("Try '" + failed.getCommandSpec().qualifiedName() + " --help'.");
            return ExitCodes.USAGE;
        });
        cli.setExecutionExceptionHandler((e, failed, parseResult) -> {
            failed.getErr().println("lockctl: " + Errors.oneLine(e));
            if (root.verbose) {
                e.printStackTrace(failed.getErr());
            }
            return ExitCodes.of(e);
        });
        withExitCodes(cli.getSubcommands().values());
        return cli;
    }

    /** Appends the exit codes to the help of {@code commands} and of their subcommands. */
    private static void withExitCodes(java.util.Collection<CommandLine> commands) {
        for (CommandLine sub : commands) {
            String[] footer = sub.getCommandSpec().usageMessage().footer();
            String[] withCodes = new String[footer.length + ExitCodes.FOOTER.length];
            System.arraycopy(footer, 0, withCodes, 0, footer.length);
            System.arraycopy(ExitCodes.FOOTER, 0, withCodes, footer.length, ExitCodes.FOOTER.length);
            sub.getCommandSpec().usageMessage().footer(withCodes);
            withExitCodes(sub.getSubcommands().values());
        }
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = LockCtl.class.getPackage().getImplementationVersion();
            return new String[] {"lockctl " + (v == null ? "(development build)" : v)};
        }
    }
}
