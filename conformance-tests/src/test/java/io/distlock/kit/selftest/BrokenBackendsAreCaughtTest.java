package io.distlock.kit.selftest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.distlock.kit.LockerConformanceTests;
import io.distlock.kit.MultiProcessSupport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/**
 * The kit checks itself: each deliberately broken backend must make the kit test that guards the broken promise
 * fail, for the right reason. A kit that passes a broken backend is a defect.
 */
class BrokenBackendsAreCaughtTest {

    /** The kit against one broken scheme; run only through the engine test kit below, never on its own. */
    abstract static class BrokenKit extends LockerConformanceTests {
        @Override
        public MultiProcessSupport multiProcessSupport() {
            return MultiProcessSupport.unsupported("in-JVM broken backend");
        }
    }

    static class NoExclusion extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-noexclusion:";
        }
    }

    static class NeverExpires extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-neverexpires:";
        }
    }

    static class ReleasesAnyone extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-releasesanyone:";
        }
    }

    static class DecreasingTokens extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-fencing:";
        }
    }

    static class Lifo extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-lifo:";
        }
    }

    static class UnreportedLoss extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-unreportedloss:";
        }
    }

    static class ContendedTryLock extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-trylock:";
        }
    }

    static class GenerousValidity extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-generousvalidity:";
        }
    }

    static class RenewsAnyone extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-renewsanyone:";
        }
    }

    static class GivesUpEarly extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-givesupearly:";
        }
    }

    static class IgnoresInterrupt extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-ignoresinterrupt:";
        }
    }

    static class SlowConnect extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-slowconnect:";
        }

        @Override
        public Optional<String> unreachableUri() {
            return Optional.of("broken-slowconnect://unreachable/kit");
        }
    }

    static class WriterBesideReaders extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-writerbesidereaders:";
        }
    }

    static class OverGrantsPermits extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-overgrantspermits:";
        }
    }

    static class KeepsDeadPermits extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-keepsdeadpermits:";
        }
    }

    static class CarelessInspection extends BrokenKit {
        @Override
        public String lockerUri() {
            return "broken-inspection:";
        }
    }

    static class GenerousFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-generous");

        @Override
        public String lockerUri() {
            return "lockfile-generous://" + DIR;
        }
    }

    static class LeavesWaitersFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-leaveswaiters");

        @Override
        public String lockerUri() {
            return "lockfile-leaveswaiters://" + DIR;
        }

        @Override
        public Optional<List<String>> storeEntries(String key) {
            try {
                return Optional.of(FileLockBackend.entries(DIR, key));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    static class WaitsThroughOutagesFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-waitsthroughoutages");

        @Override
        public String lockerUri() {
            return "lockfile-waitsthroughoutages://" + DIR;
        }

        @Override
        public Optional<io.distlock.kit.StoreFaults> storeFaults() {
            return Optional.of(new FileStoreFaults(DIR, leaseTime()));
        }
    }

    static class ReadersOvertakeFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-readersovertake");

        @Override
        public String lockerUri() {
            return "lockfile-readersovertake://" + DIR;
        }
    }

    static class RacyFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-racy");

        @Override
        public String lockerUri() {
            return "lockfile-racy://" + DIR;
        }
    }

    static class JvmOnlyFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-jvmonly");

        @Override
        public String lockerUri() {
            return "lockfile-jvmonly://" + DIR;
        }

        @Override
        public Optional<io.distlock.kit.StoreFaults> storeFaults() {
            return Optional.of(new FileStoreFaults(DIR, leaseTime()));
        }
    }

    static class FallingTokensFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-fallingtokens");

        @Override
        public String lockerUri() {
            return "lockfile-fallingtokens://" + DIR;
        }
    }

    static class ContendedFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-contended");

        @Override
        public String lockerUri() {
            return "lockfile-contended://" + DIR;
        }
    }

    static class NeverExpiringFileLock extends LockerConformanceTests {
        static final java.nio.file.Path DIR = FileLockConformanceTest.directory("lockfile-neverexpires");

        @Override
        public String lockerUri() {
            return "lockfile-neverexpires://" + DIR;
        }
    }

    @Test
    void readersOvertakingAWaitingWriter_failWriterStarvation() {
        assertFails(ReadersOvertakeFileLock.class, "writeLock_behindAStreamOfReaders_isServed", "writer starvation");
    }

    @Test
    void fileStoreWaitingThroughOutages_failsTheStoreDownTest() {
        assertFails(
                WaitsThroughOutagesFileLock.class,
                "storeDown_tryLock_lock_andLockWithoutDeadline_failWithBackendException_withinConnectTimeout",
                "must fail with LockBackendException");
    }

    @Test
    void neverExpiringFileStore_failsKilledHolder() {
        assertFails(
                NeverExpiringFileLock.class,
                "killedHolder_lockFreedWithinLeaseTimePlusSlack",
                "the lock of a killed holder was not freed");
    }

    @Test
    void contendedTryLockFileStore_failsTheorem4AcrossProcesses() {
        assertFails(
                ContendedFileLock.class,
                "tryLock_simultaneousAcrossProcesses_atLeastOneWinsEveryRound_theorem4",
                "simultaneous tryLocks across");
    }

    @Test
    void racyFileStore_failsMutualExclusionAcrossProcesses() {
        assertFails(RacyFileLock.class, "lock_isExclusive_acrossProcesses_theorem1", "at once across processes");
    }

    /**
     * The randomized run's worker processes: a store that excludes only within a JVM passes the run in one JVM. A run
     * whose history shows the overlap keeps its history files for inspection (they are deleted here).
     */
    @Test
    void jvmOnlyFileStore_failsTheRandomizedRunAcrossProcesses() throws IOException {
        long started = System.currentTimeMillis();
        String message = assertFails(
                JvmOnlyFileLock.class,
                "randomizedOperations_underRandomStoreFaults_keepTheHistoryConsistent",
                "overlap",
                "inside the critical section at once");
        if (message.contains("overlapping holds")) { // the history's violation, not the workers' own check
            List<Path> kept = keptHistories(started);
            try {
                assertFalse(kept.isEmpty(), "the failed run's history files were not kept");
            } finally {
                for (Path history : kept) {
                    deleteTree(history.getParent());
                }
            }
        }
    }

    /** The history directories of randomized runs kept since {@code sinceMillis}, in the JVM's temporary directory. */
    private static List<Path> keptHistories(long sinceMillis) throws IOException {
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        try (java.util.stream.Stream<Path> dirs = Files.list(tmp)) {
            List<Path> found = new ArrayList<>();
            for (Path dir : (Iterable<Path>) dirs::iterator) {
                Path history = dir.resolve("history");
                if (dir.getFileName().toString().startsWith("distlock-kit-")
                        && Files.isDirectory(history)
                        && Files.getLastModifiedTime(dir).toMillis() >= sinceMillis - 1000) {
                    found.add(history);
                }
            }
            return found;
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (java.util.stream.Stream<Path> tree = Files.walk(dir)) {
            for (Path path : (Iterable<Path>) tree.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        }
    }

    @Test
    void fallingTokensFileStore_failsFencedResourceAcrossProcesses() {
        assertFails(
                FallingTokensFileLock.class,
                "fencedResource_rejectsFrozenHoldersWrites_afterNextHolderWrote",
                "the fenced resource accepted");
    }

    @Test
    void noExclusion_failsMutualExclusion() {
        assertFails(NoExclusion.class, "lock_isExclusive_manyThreadsOneKey_theorem1", "at once");
        assertFails(NoExclusion.class, "tryLock_isExclusive_manyThreadsOneKey_theorem3", "at once");
        assertFails(NoExclusion.class, "tryLockAndLock_whileAnotherOwnerHolds_areRefused", "tryLock of another locker");
        assertFails(NoExclusion.class, "lockAll_randomOverlappingKeySets_noDeadlock_exclusionPerKey", "at once");
    }

    @Test
    void writerBesideReaders_failsReadWriteExclusion() {
        assertFails(
                WriterBesideReaders.class,
                "readWrite_writeHoldOverlapsNoOtherHold_manyThreads",
                "a write hold beside another",
                "at once");
        assertFails(
                WriterBesideReaders.class,
                "writeLock_whileReadersHold_isRefused_andReadersWhileAWriterHolds",
                "a writer's tryLock beside a reader");
    }

    @Test
    void overGrantedPermit_failsTheSemaphoresBound() {
        assertFails(
                OverGrantsPermits.class, "semaphore_grantsNPermits_refusesOneMore_andAReleaseLetsItIn", "beyond the");
        assertFails(
                OverGrantsPermits.class,
                "semaphore_neverMoreThanNHolders_manyThreads",
                "more holds at once than the limit",
                "more holders at once than the");
    }

    @Test
    void carelessInspection_failsTheLookUp_theListing_andTheBreak() {
        assertFails(
                CarelessInspection.class,
                "inspect_showsTheHoldersLabel_token_andTimes_toAnotherLocker",
                "the owner label stored with");
        assertFails(
                CarelessInspection.class, "listHeld_showsTheHeldKeys_andNotTheReleasedOnes", "the held keys listed");
        assertFails(
                CarelessInspection.class,
                "breakLock_tellsTheHolder_andGrantsTheNextWaiter",
                "that its lock was broken");
    }

    @Test
    void deadHoldersPermitNeverReturned_failsPermitCrashSafety() {
        assertFails(
                KeepsDeadPermits.class,
                "permit_ofAHolderThatDies_isFreedWithItsLease_andAWaiterGetsIt",
                "the permit of a holder that died was not returned");
    }

    @Test
    void neverExpiringLease_failsExpiry() {
        assertFails(NeverExpires.class, "lease_notRenewed_expiresWithinTtlPlusSlack", "never expire");
        assertFails(NeverExpires.class, "lostLease_whenRenewalsFail_isReportedAndLockPassesOn", "was not free");
    }

    @Test
    void releaseOfAnyonesLock_failsStaleRelease() {
        assertFails(ReleasesAnyone.class, "release_withStaleHandle_keepsNewHolder", "freed the new holder");
    }

    @Test
    void decreasingTokens_failFencing() {
        assertFails(DecreasingTokens.class, "fencingTokens_increaseStrictly_inAcquisitionOrder", "got token");
    }

    @Test
    void lifoServiceDeclaredFair_failsArrivalOrder() {
        assertFails(Lifo.class, "lock_servesWaitersInArrivalOrder_fairBackends_theorem2", "overtaken");
    }

    @Test
    void unreportedLoss_failsLostLease() {
        assertFails(UnreportedLoss.class, "lostLease_whenStoreDropsIt_isReportedOnce", "onLost did not fire");
    }

    @Test
    void tryLockFailingUnderContention_failsTheorem4() {
        assertFails(ContendedTryLock.class, "tryLock_simultaneousOnFreeLock_atLeastOneWins_theorem4", "succeeded");
    }

    @Test
    void generousValidity_failsLostLeaseValidity() {
        assertFails(
                GenerousValidity.class,
                "lostLease_whenRenewalsFail_isReportedAndLockPassesOn",
                "validity too generous");
    }

    /**
     * The thawed holder believes its ten-fold validity: the history shows it either as a validity that outlived the
     * next grant (its renewal, refused, reports the loss first) or, when its release comes before that renewal, as a
     * hold that overlaps the next one. Which comes first depends on the machine's load; both are this defect.
     */
    @Test
    void generousValidityFileStore_failsFrozenHolderHistoryAcrossProcesses() {
        assertFails(
                GenerousFileLock.class,
                "frozenHolder_losesLease_andIsToldWhenThawed",
                "validity outlived the lock on key",
                "overlapping holds on key");
    }

    @Test
    void ownerBlindRenewal_failsStaleRenew() {
        assertFails(
                RenewsAnyone.class,
                "renew_withStaleHandle_returnsEmpty_keepsNewHoldersExpiry",
                "renew of a stale lease");
    }

    @Test
    void acquireGivingUpEarly_isReportedAsSpiBreach() {
        assertFails(GivesUpEarly.class, "acquire_whileHeld_waitsOutItsDeadline", "breaks the SPI contract");
        assertFails(GivesUpEarly.class, "lease_notRenewed_expiresWithinTtlPlusSlack", "breaks the SPI contract");
    }

    @Test
    void swallowedInterrupt_failsInterruptedAcquire() {
        assertFails(
                IgnoresInterrupt.class,
                "acquire_interrupted_throwsInterruptedException_leavesNothing",
                "must throw InterruptedException");
    }

    @Test
    void connectIgnoringTimeout_failsUnreachableStore() {
        assertFails(SlowConnect.class, "open_unreachableStore_failsWithinConnectTimeout", "did not fail within");
    }

    @Test
    void waiterEntriesLeftBehind_failNothingLeft() {
        assertFails(
                LeavesWaitersFileLock.class, "failedAttempts_andRelease_leaveNothingInStore", "left something behind");
        assertFails(
                LeavesWaitersFileLock.class,
                "acquire_interrupted_throwsInterruptedException_leavesNothing",
                "left something behind");
        assertFails(LeavesWaitersFileLock.class, "acquire_whileHeld_waitsOutItsDeadline", "left something behind");
    }

    /**
     * Runs one kit test against a broken backend and asserts that it failed with {@code reason}, or one of {@code
     * alternatives}, in its message; returns that message.
     */
    static String assertFails(Class<?> kit, String test, String reason, String... alternatives) {
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(kit, test))
                .execute()
                .testEvents();
        assertEquals(1, events.started().count(), () -> kit.getSimpleName() + "." + test + " did not run");
        List<Event> failed = events.failed().list();
        assertEquals(
                1,
                failed.size(),
                () -> "the kit passed a broken backend: " + kit.getSimpleName() + "." + test + " did not fail ("
                        + describe(events) + ")");
        Throwable cause = failed.get(0)
                .getPayload(TestExecutionResult.class)
                .flatMap(TestExecutionResult::getThrowable)
                .orElseThrow();
        String message = String.valueOf(cause.getMessage());
        assertTrue(
                message.contains(reason)
                        || java.util.Arrays.stream(alternatives).anyMatch(message::contains),
                () -> kit.getSimpleName() + "." + test + " failed, but not because of the broken promise ('" + reason
                        + "' not in the message): " + cause);
        return message;
    }

    private static String describe(Events events) {
        return events.finished().stream()
                .map(e -> e.getPayload(TestExecutionResult.class)
                        .map(r -> r.getStatus()
                                + r.getThrowable().map(t -> ": " + t).orElse(""))
                        .orElse("?"))
                .collect(Collectors.joining("; "));
    }
}
