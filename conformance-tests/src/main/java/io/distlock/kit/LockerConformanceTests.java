package io.distlock.kit;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance kit: every test a distlock backend must pass. A backend author extends this class in the backend
 * module's tests and supplies the store's URI:
 *
 * <pre>{@code
 * class EtcdConformanceTest extends LockerConformanceTests {
 *     @RegisterExtension static EtcdServer etcd = EtcdServer.single();
 *     @Override public String lockerUri() { return "etcd://" + etcd.address() + "/kit"; }
 * }
 * }</pre>
 *
 * <p>The tests come from the contracts this class combines, one concept each: {@link MutualExclusionContract}
 * (Theorems 1 and 3), {@link ProgressContract} (Theorems 2 and 4), {@link LeaseContract}, {@link AbandonedAttemptContract}, {@link
 * FencingContract},
 * {@link MultiKeyContract}, {@link LockHandleContract}, {@link BadInputContract} and {@link MultiProcessContract}. A
 * backend that can pass only some may implement those interfaces instead. Tests that need a capability the backend
 * does not declare ({@link io.distlock.Capabilities}) are skipped through JUnit assumptions, with the reason in the
 * report. The hooks with defaults are in {@link LockerFixture}.
 *
 * <p>Every test has a five-minute ceiling; the waits inside are bounded far more tightly by the fixture's durations,
 * all scaled by {@link io.distlock.kit.TestTimeouts}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
public abstract class LockerConformanceTests
        implements MutualExclusionContract,
                ProgressContract,
                LeaseContract,
                AbandonedAttemptContract,
                FencingContract,
                MultiKeyContract,
                LockHandleContract,
                BadInputContract,
                MultiProcessContract {

    /** For subclasses. */
    protected LockerConformanceTests() {}
}
