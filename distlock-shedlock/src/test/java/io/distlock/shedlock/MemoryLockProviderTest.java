package io.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.Test;

/** ShedLock's scenarios on {@code memory:}, two lockers on one named space; and what no store decides. */
class MemoryLockProviderTest extends LockProviderScenarios {

    private static final String URI = "memory://shedlock-provider-test";

    @Override
    String lockerUri() {
        return URI;
    }

    @Test
    void lock_withZeroLockAtMostFor_isRefused_namingTheLock() {
        try (RemoteLocker locker = RemoteLockers.open(URI)) {
            DistlockLockProvider provider = new DistlockLockProvider(locker);

            assertThatThrownBy(() -> provider.lock(
                            new LockConfiguration(ClockProvider.now(), "report", Duration.ZERO, Duration.ZERO)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lockAtMostFor of lock 'report' is zero");
        }
    }
}
