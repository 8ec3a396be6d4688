package io.distlock.lockctl;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code lockctl} command line. */
@Command(
        name = "lockctl",
        mixinStandardHelpOptions = true,
        versionProvider = LockCtl.Version.class,
        description = "Distributed locks from the command line.",
        subcommands = {DemoCommand.class, TimeServiceCommand.class, CommandLine.HelpCommand.class})
public final class LockCtl {

    LockCtl() {}

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the command line and returns its exit status (for tests). */
    static int run(String... args) {
        return new CommandLine(new LockCtl()).execute(args);
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
