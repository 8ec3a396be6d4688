package io.distlock.lockctl;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Runs the embedded ZooKeeper in the foreground until stopped, so that the {@code lockctl} commands of other terminals
 * share it: prints the {@code export DISTLOCK_STORE=...} line that points them at it as its first line on stdout.
 */
@Command(
        name = "store",
        mixinStandardHelpOptions = true,
        description = {
            "Runs a ZooKeeper server for the lockctl commands of other terminals to share, until stopped.",
            "Without a store each command embeds its own, and two runs exclude nothing. Stops on Ctrl-C or SIGTERM.",
            "Prints first, on stdout, the line that points them at it: export DISTLOCK_STORE=zk://127.0.0.1:PORT/lockctl.",
            "Its data lives in a temporary directory, removed when it stops."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl store                       # then, in other terminals, the export line it printed, and:",
            "  lockctl run --key backup -- ./backup.sh",
            "  lockctl store --port 0              # any free port"
        })
final class StoreCommand implements Callable<Integer> {

    /** The port when none is given: ZooKeeper's usual one. */
    static final int DEFAULT_PORT = 2181;
    /** The locks' base path in the URI it prints. */
    static final String BASE_PATH = "lockctl";

    private static final long STOP_TIMEOUT_SECONDS = 10;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--port",
            defaultValue = "" + DEFAULT_PORT,
            description = "The port on 127.0.0.1; 0 = any free port (default: ${DEFAULT-VALUE}). Exits 2 if it is in"
                    + " use.")
    int port;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65_535) {
            throw new ParameterException(spec.commandLine(), "--port must be between 0 and 65535, not " + port);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (port != 0 && inUse(port)) {
            err.println("lockctl: port " + port + " of 127.0.0.1 is in use (another ZooKeeper, or another lockctl"
                    + " store?): give --port 0 for any free port, or another --port");
            return ExitCodes.USAGE;
        }
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        // on SIGINT/SIGTERM the JVM runs this hook and halts when it returns: it waits for the server to be closed
        Thread hook = new Thread(
                () -> {
                    stop.countDown();
                    try {
                        stopped.await(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "lockctl-store-stop");
        boolean interrupted = false;
        try (EmbeddedZooKeeper server = EmbeddedZooKeeper.start(port)) {
            out.println("export " + DefaultStore.VARIABLE + "=" + server.uri(BASE_PATH));
            out.flush();
            err.println("lockctl: ZooKeeper serving on " + server.address() + " until Ctrl-C; in other terminals run"
                    + " the line above, then e.g. lockctl run --key K -- COMMAND");
            err.flush();
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                stop.await();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        } finally {
            stopped.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it returns now that the server is closed
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        err.println("lockctl: store stopped");
        return ExitCodes.OK;
    }

    private static boolean inUse(int port) {
        try (ServerSocket probe = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
