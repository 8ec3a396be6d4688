package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLockers;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The lease keeper's timers: set for the locks held long enough to need them, at the instant they are due. */
class LeaseKeeperTest {

    private static DefaultRemoteLocker locker(TestInfo test, Duration leaseTime, HookedProvider provider) {
        return (DefaultRemoteLocker) RemoteLockers.builder()
                .uri("memory://keeper-" + test.getTestMethod().orElseThrow().getName())
                .provider(provider)
                .leaseTime(leaseTime)
                .build();
    }

    /** Each grant set two timers (renewal, watchdog), and each timer that became the earliest woke the timer thread. */
    @Test
    void track_locksReleasedAtOnce_setNoTimerOfTheirOwn(TestInfo test) throws Exception {
        int locks = 200;
        try (DefaultRemoteLocker locker = locker(test, Duration.ofSeconds(30), new HookedProvider())) {
            long before = locker.timersSet();
            for (int i = 0; i < locks; i++) {
                locker.lock("k").release();
            }

            assertThat(locker.timersSet() - before)
                    .as("timers set for %d short holds", locks)
                    .isLessThan(locks / 2);
        }
    }

    @Test
    void track_lockHeldPastItsRenewalTime_isRenewedOnTime(TestInfo test) throws Exception {
        HookedProvider provider = new HookedProvider();
        Duration leaseTime = Duration.ofSeconds(6); // renewed every 2 s: its timers are set a moment after the grant
        try (DefaultRemoteLocker locker = locker(test, leaseTime, provider)) {
            RemoteLock lock = locker.lock("k");

            Waits.until("the first renewal", Duration.ofSeconds(4), () -> provider.renewals("k") > 0);
            assertThat(lock.isHeld()).isTrue();
            lock.release();
        }
    }

    /** A backend's deferred work (ZooKeeper: the watch on a held lock's node) runs once per lock held a moment. */
    @ParameterizedTest(name = "lease {0} s")
    @ValueSource(ints = {30, 2}) // timers set a moment after the grant; set at once (a renewal due within a second)
    void onStillHeld_lockHeldAMoment_isCalledOnce(int leaseSeconds, TestInfo test) throws Exception {
        HookedProvider provider = new HookedProvider();
        try (DefaultRemoteLocker locker = locker(test, Duration.ofSeconds(leaseSeconds), provider)) {
            RemoteLock lock = locker.lock("k");

            Waits.until("the backend told", Duration.ofSeconds(5), () -> provider.stillHeld("k") > 0);
            Thread.sleep(2 * LeaseKeeper.DEFERRAL.toMillis()); // two more passes' time
            assertThat(provider.stillHeld("k")).as("calls for one lock").isEqualTo(1);
            lock.release();
        }
    }

    @Test
    void onStillHeld_locksReleasedAtOnce_isNotCalledForThem(TestInfo test) throws Exception {
        int locks = 200;
        HookedProvider provider = new HookedProvider();
        try (DefaultRemoteLocker locker = locker(test, Duration.ofSeconds(30), provider)) {
            for (int i = 0; i < locks; i++) {
                locker.lock("k").release();
            }
            Thread.sleep(2 * LeaseKeeper.DEFERRAL.toMillis()); // the passes' time

            assertThat(provider.stillHeld("k"))
                    .as("calls for %d short holds", locks)
                    .isLessThan(locks / 2);
        }
    }
}
