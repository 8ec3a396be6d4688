package io.distlock.lockctl;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.distlock.RemoteLockers;
import io.distlock.lockctl.conformance.ConformanceReport;
import io.distlock.lockctl.conformance.UriConformanceTests;
import io.distlock.spi.Redaction;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.MethodFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Runs the conformance kit against any lock URI: how a user checks a new store or their own deployment. */
@Command(
        name = "conformance",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs the conformance kit against a lock URI: mutual exclusion (seed 000 Theorems 1, 3), progress",
            "(Theorems 2, 4), leases, fencing, multi-key, lock handles, bad input, holders killed and frozen in",
            "worker JVMs. Prints each test passed, failed (with the offending history excerpt) or skipped and why;",
            "exits 1 if any failed. Takes a few minutes; use a base path of its own (it creates and deletes keys)."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  lockctl conformance --store zk://127.0.0.1:2181/kit",
            "  lockctl conformance --store 'etcd://127.0.0.1:2379/kit?ttl=10s' --only '.*[Ff]encing.*'",
            "  lockctl conformance --store memory:"
        })
final class ConformanceCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(
            names = "--store",
            paramLabel = "URI",
            description = "The lock URI to check (default: $DISTLOCK_STORE; one of the two is required).")
    String store;

    @Option(names = "--only", paramLabel = "REGEX", description = "Run only the tests whose method name matches REGEX.")
    String only;

    @Override
    public Integer call() {
        String store = DefaultStore.chosen(this.store, LockCtl.env(spec));
        if (store == null) {
            throw new ParameterException(
                    spec.commandLine(), "Missing --store: give the lock URI to check, or set DISTLOCK_STORE");
        }
        PrintWriter out = spec.commandLine().getOut();
        // a malformed URI, unknown scheme or unreachable store: one line, before a hundred failing tests say it
        RemoteLockers.open(store).close();
        String previous = System.setProperty(UriConformanceTests.URI_PROPERTY, store);
        try {
            LauncherDiscoveryRequestBuilder request =
                    LauncherDiscoveryRequestBuilder.request().selectors(selectClass(UriConformanceTests.class));
            if (only != null) {
                request.filters(MethodFilter.includeMethodNamePatterns(".*[#.](?:" + only + ")"));
            }
            LauncherDiscoveryRequest discovery = request.configurationParameter(
                            "junit.jupiter.extensions.autodetection.enabled", "false")
                    .build();
            ConformanceReport report = new ConformanceReport(out);
            out.println("Conformance kit against " + Redaction.uri(store) + ":");
            out.flush();
            Launcher launcher = LauncherFactory.create();
            launcher.execute(discovery, report);
            int total = report.passed() + report.failed().size() + report.skipped();
            out.printf(
                    "%d tests: %d passed, %d failed, %d skipped%n",
                    total, report.passed(), report.failed().size(), report.skipped());
            if (!report.failed().isEmpty()) {
                out.println("FAILED: " + String.join(", ", report.failed()));
                return ExitCodes.FAILED;
            }
            if (total == 0) {
                out.println("No test matched" + (only == null ? "" : " --only " + only));
                return ExitCodes.USAGE;
            }
            return ExitCodes.OK;
        } finally {
            if (previous == null) {
                System.clearProperty(UriConformanceTests.URI_PROPERTY);
            } else {
                System.setProperty(UriConformanceTests.URI_PROPERTY, previous);
            }
        }
    }
}
