package io.distlock.kit;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance kit: every test a distlock backend must pass. A backend author extends this class in the backend
 * module's tests and supplies the store's URI:
 *
 * <pre>{@code
 * class ZooKeeperConformanceTest extends LockerConformanceTests {
 *     @RegisterExtension
 *     static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build(); // from test-fixtures
 *
 *     @Override
 *     public String lockerUri() {
 *         return "zk://" + ZK.connectString() + "/kit";
 *     }
 * }
 * }</pre>
 *
 * <p>The tests come from the contracts this class combines, one concept each: {@link MutualExclusionContract}
 * (Theorems 1 and 3), {@link ProgressContract} (Theorems 2 and 4), {@link LeaseContract}, {@link
 * FixedLeaseContract}, {@link AbandonedAttemptContract}, {@link FencingContract}, {@link MultiKeyContract}, {@link LockHandleContract}, {@link
 * BadInputContract}, {@link StoreFaultContract}, {@link FaultMatrixContract}, {@link ClockSkewContract}, {@link RandomizedFaultRunContract}, {@link MultiProcessContract}, and for the backends
 * that declare them ({@link io.distlock.Capabilities#kinds()}) {@link ReadWriteLockContract}, {@link
 * SemaphoreContract} and, across processes, {@link MultiProcessKindsContract}, and for those that declare the
 * operations ({@link io.distlock.Capabilities#operations()}) {@link InspectionContract} and, where the leader can be
 * read back, {@link ElectionContract}; the early warning: {@link LeaseWarningContract}; the lock-delay and release requests: {@link LockDelayContract},
 * {@link ReleaseRequestContract}. A backend that can pass only
 * some may implement those interfaces
 * instead. Tests that need what the backend does not declare ({@link io.distlock.Capabilities}, or a hook left at its
 * default) are marked {@link Requires} and skipped with the reason, in the console and in the report. The hooks with
 * defaults are in {@link LockerFixture}; give {@link LockerFixture#unreachableUri()} and {@link
 * LockerFixture#storeEntries(String)} where you can.
 *
 * <p>The seeds' listings and theorems the tests check (Theorems 1 to 4 of seed 000, its leases, seed 001's and 003's
 * ordered multi-key locking, seed 002's owner-checked release and extension) are stated in the project's {@code
 * docs/theory.md}, since the seeds themselves are not shipped.
 *
 * <p>Every test has a five-minute ceiling; the waits inside are bounded far more tightly by the fixture's durations,
 * all scaled by {@link io.distlock.kit.TestTimeouts}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
public abstract class LockerConformanceTests
        implements MutualExclusionContract,
                ProgressContract,
                LeaseContract,
                FixedLeaseContract,
                AbandonedAttemptContract,
                FencingContract,
                MultiKeyContract,
                LockHandleContract,
                BadInputContract,
                StoreFaultContract,
                FaultMatrixContract,
                ClockSkewContract,
                RandomizedFaultRunContract,
                MultiProcessContract,
                ReadWriteLockContract,
                SemaphoreContract,
                MultiProcessKindsContract,
                InspectionContract,
                LeaseWarningContract,
                LockDelayContract,
                ReleaseRequestContract,
                ElectionContract {

    /** For subclasses. */
    protected LockerConformanceTests() {}
}
