package io.distlock.lockctl;

import io.distlock.cassandra.TimeService;
import io.distlock.spi.Redaction;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Runs one replica of seed 000's GlobalTime service (section 5.4) for a Cassandra lock store until stopped. Lockers
 * opened with {@code timeService=external} then only read the cell.
 */
@Command(
        name = "time-service",
        mixinStandardHelpOptions = true,
        description = {
            "Runs a replica of the GlobalTime service of a Cassandra lock store until stopped (Ctrl-C).",
            "Lockers opened with timeService=external rely on such replicas instead of running their own."
        })
final class TimeServiceCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(
            names = "--store",
            description = "The Cassandra store, e.g. cassandra://10.0.0.1:9042/locks?timePeriod=500ms"
                    + " (default: $DISTLOCK_STORE; one of the two is required).")
    String store;

    @Override
    public Integer call() throws InterruptedException {
        String store = DefaultStore.chosen(this.store, LockCtl.env(spec));
        if (store == null) {
            throw new ParameterException(
                    spec.commandLine(), "Missing --store: give the Cassandra store's URI, or set DISTLOCK_STORE");
        }
        PrintWriter out = spec.commandLine().getOut();
        CountDownLatch stopped = new CountDownLatch(1);
        try (TimeService service = TimeService.start(store)) {
            out.println("GlobalTime replica running on " + Redaction.uri(store) + "; GlobalTime = "
                    + Instant.EPOCH.plusNanos(service.globalTimeMicros() * 1000L) + ". Ctrl-C to stop.");
            out.flush();
            Runtime.getRuntime().addShutdownHook(new Thread(stopped::countDown, "lockctl-time-service-stop"));
            stopped.await();
        }
        return 0;
    }
}
