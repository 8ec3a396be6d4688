package io.distlock.kit.selftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.distlock.kit.BadInputContract;
import io.distlock.kit.FaultMatrixContract;
import io.distlock.kit.FencingContract;
import io.distlock.kit.MultiProcessContract;
import io.distlock.kit.MultiProcessSupport;
import io.distlock.kit.ProgressContract;
import io.distlock.kit.RandomizedFaultRunContract;
import io.distlock.kit.StoreFaultContract;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * Tests a backend cannot pass by design are skipped with the reason in the report, never dropped or emptied: the
 * fencing and fairness tests for a backend that declares neither, the multi-process tests for an in-JVM store, the
 * store-fault tests for a fixture without store faults. The other tests of the same contracts still run and pass. Only
 * the contracts whose tests skip on such a backend run here (the rest of the kit runs on the in-memory store in
 * {@link MemoryConformanceTest}, whose renewed leases this backend shares).
 */
class SkipsAreReportedTest {

    /**
     * An honest backend without fencing or fairness, given no store faults, no other processes and no unreachable URI;
     * run only through the engine test kit.
     */
    static class NoFencingKit
            implements FencingContract,
                    ProgressContract,
                    BadInputContract,
                    StoreFaultContract,
                    FaultMatrixContract,
                    RandomizedFaultRunContract,
                    MultiProcessContract {
        @Override
        public String lockerUri() {
            return "nofencing-memory:";
        }

        @Override
        public MultiProcessSupport multiProcessSupport() {
            return MultiProcessSupport.unsupported("nofencing-memory: locks live inside one JVM");
        }
    }

    @Test
    void undeclaredCapabilities_skipWithReason_othersPass() {
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(NoFencingKit.class))
                .execute()
                .testEvents();
        assertEquals(
                0, events.failed().count(), () -> "failures: " + events.failed().list());
        assertSkipped(events, "fencingTokens_increaseStrictly_inAcquisitionOrder", "declares no fencing");
        assertSkipped(events, "fencedResource_rejectsFrozenHoldersWrites_afterNextHolderWrote", "declares no fencing");
        assertSkipped(events, "lock_servesWaitersInArrivalOrder_fairBackends_theorem2", "declares no fairness");
        assertSkipped(events, "lock_isExclusive_acrossProcesses_theorem1", "locks live inside one JVM");
        assertSkipped(events, "lockEntryDeletedOutOfBand_holderIsToldWithinTheBound", "no store faults given");
        assertSkipped(
                events,
                "minorityOfNodesKilled_duringAContendedRun_exclusionHolds_andEveryThreadFinishes",
                "no node faults given");
        assertSkipped(
                events,
                "clientPartitionedPastItsLease_reportsTheLoss_andNoOtherHolderOverlapsItsBelief",
                "no client partition given");
        assertEquals(
                0,
                events.aborted().count(),
                () -> "aborted instead of skipped: " + events.aborted().list());
        events.skipped().stream().forEach(e -> {
            String reason = e.getPayload(String.class).orElse("");
            assertTrue(
                    reason.contains("declares no fencing")
                            || reason.contains("declares no fairness")
                            || reason.contains("locks live inside one JVM")
                            || reason.contains("no unreachable URI given")
                            || reason.contains("no store faults given")
                            || reason.contains("no node faults given")
                            || reason.contains("no client partition given"),
                    () -> e.getTestDescriptor().getDisplayName() + " skipped for an unexpected reason: " + reason);
        });
        assertTrue(
                events.succeeded().count() >= 12,
                () -> "passed: " + events.succeeded().count());
    }

    @Test
    void fencingTokenPresence_mustMatchDeclaration() {
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(NoFencingKit.class, "fencingToken_isPresent_exactlyWhenDeclared"))
                .execute()
                .testEvents();
        assertEquals(1, events.succeeded().count(), "a backend without fencing gives no token, as it declares");
    }

    private static void assertSkipped(Events events, String test, String reason) {
        String message = events.skipped().stream()
                .filter(e -> e.getTestDescriptor().getDisplayName().startsWith(test + "("))
                .findFirst()
                .flatMap(e -> e.getPayload(String.class))
                .orElseThrow(() -> new AssertionError(test + " was not reported as skipped"));
        assertTrue(message.contains(reason), () -> test + " skipped with '" + message + "', want '" + reason + "'");
    }
}
