package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LeaseRiskListener;
import io.distlock.LockBackendException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * The early warning ({@link RemoteLock#onAtRisk}): told once when renewals fail and the validity left falls below the
 * threshold, before the loss; told again if a renewal succeeds; never while renewals succeed, nor for a fixed lease.
 * On the real in-memory backend, its renewals made to fail by the hooks; the system ticker, so the margins are wide.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class AtRiskTest {

    private static final Duration LEASE = Duration.ofSeconds(3);

    /** What the listener heard, in order: "at risk <millis left>", "recovered" or "lost". */
    private final List<String> heard = new CopyOnWriteArrayList<>();

    private final LeaseRiskListener listener = new LeaseRiskListener() {
        @Override
        public void atRisk(RemoteLock lock, Duration validityLeft) {
            heard.add("at risk " + validityLeft.toMillis());
        }

        @Override
        public void recovered(RemoteLock lock) {
            heard.add("recovered");
        }
    };

    private static RemoteLocker locker(TestInfo test, HookedProvider hooked, Duration threshold) {
        return RemoteLockers.builder()
                .uri("memory://at-risk-" + test.getTestMethod().orElseThrow().getName())
                .provider(hooked)
                .leaseTime(LEASE)
                .atRiskThreshold(threshold)
                .build();
    }

    private static void failRenewals(HookedProvider hooked) {
        hooked.beforeRenew = lease -> {
            throw new LockBackendException("the store does not answer (staged)");
        };
    }

    private void awaitHeard(int count) throws InterruptedException {
        long end = System.nanoTime() + Waits.scaled(Duration.ofSeconds(20)).toNanos();
        while (heard.size() < count && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(heard).as("what the listeners heard").hasSizeGreaterThanOrEqualTo(count);
    }

    @Test
    void renewalsFailing_warnOnce_belowTheThreshold_beforeTheLoss(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        Duration threshold = Duration.ofSeconds(1);
        try (RemoteLocker locker = locker(test, hooked, threshold)) {
            RemoteLock lock = locker.lock("k");
            lock.onAtRisk(listener);
            lock.onLost(l -> heard.add("lost"));
            failRenewals(hooked);
            awaitHeard(2);
            assertThat(heard).hasSize(2);
            assertThat(heard.get(1)).isEqualTo("lost");
            long left = Long.parseLong(heard.get(0).substring("at risk ".length()));
            assertThat(left)
                    .as("the validity left when warned, ms")
                    .isPositive()
                    .isLessThanOrEqualTo(1000);
        }
    }

    @Test
    void aRenewalThatSucceedsAfterTheWarning_isReportedAsRecovered_andTheLockKept(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        try (RemoteLocker locker = locker(test, hooked, Duration.ofSeconds(2))) {
            RemoteLock lock = locker.lock("k");
            lock.onAtRisk(listener);
            lock.onLost(l -> heard.add("lost"));
            failRenewals(hooked);
            awaitHeard(1);
            hooked.beforeRenew = lease -> Optional.empty();
            awaitHeard(2);
            assertThat(heard.get(0)).startsWith("at risk");
            assertThat(heard.get(1)).isEqualTo("recovered");
            assertThat(lock.isHeld()).isTrue();
            failRenewals(hooked); // a second episode warns again
            awaitHeard(3);
            assertThat(heard.get(2)).startsWith("at risk");
            hooked.beforeRenew = lease -> Optional.empty();
            awaitHeard(4);
            assertThat(heard.get(3)).isEqualTo("recovered");
        }
    }

    @Test
    void renewalsThatSucceed_orAFixedLease_neverWarn(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        try (RemoteLocker locker = locker(test, hooked, Duration.ofMillis(2900))) {
            RemoteLock renewed = locker.lock("renewed");
            renewed.onAtRisk(listener);
            RemoteLock fixed = locker.lockFor("fixed", Duration.ofMillis(1500));
            fixed.onAtRisk(listener);
            fixed.onLost(l -> heard.add("fixed lease ended"));
            Thread.sleep(LEASE.multipliedBy(2).toMillis());
            assertThat(heard).containsExactly("fixed lease ended");
            assertThat(hooked.renewals("renewed"))
                    .as("renewals of the renewed lock")
                    .isGreaterThanOrEqualTo(4);
            assertThat(renewed.isHeld()).isTrue();
        }
    }

    /**
     * Episodes in quick succession, told on a pool of four threads with listeners of uneven speed: each listener still
     * hears at risk, recovered, at risk... in the order they were raised.
     */
    @Test
    void episodesInQuickSuccession_areHeardInOrder_onAPoolOfThreads(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        java.util.concurrent.atomic.AtomicInteger renewals = new java.util.concurrent.atomic.AtomicInteger();
        hooked.beforeRenew = lease -> {
            if (renewals.incrementAndGet() % 2 == 1) {
                throw new LockBackendException("the store does not answer (staged)");
            }
            return Optional.empty();
        };
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("memory://at-risk-" + test.getTestMethod().orElseThrow().getName())
                .provider(hooked)
                .leaseTime(Duration.ofMillis(600))
                .atRiskThreshold(Duration.ofMillis(590))
                .build()) {
            RemoteLock lock = locker.lock("k");
            lock.onAtRisk(
                    new LeaseRiskListener() {
                        @Override
                        public void atRisk(RemoteLock l, Duration left) {
                            pause();
                            heard.add("at risk");
                        }

                        @Override
                        public void recovered(RemoteLock l) {
                            pause();
                            heard.add("recovered");
                        }

                        private void pause() {
                            try {
                                Thread.sleep(java.util.concurrent.ThreadLocalRandom.current()
                                        .nextInt(30));
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    },
                    pool);
            awaitHeard(8);
            lock.release();
        } finally {
            pool.shutdown();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        for (int i = 0; i < heard.size(); i++) {
            assertThat(heard.get(i))
                    .as("call " + (i + 1) + " of " + heard)
                    .isEqualTo(i % 2 == 0 ? "at risk" : "recovered");
        }
    }

    @Test
    void badInput_isRefused() {
        assertThatThrownBy(() -> RemoteLockers.builder().atRiskThreshold(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("atRiskThreshold");
        try (RemoteLocker locker = RemoteLockers.open("memory://at-risk-bad-input")) {
            RemoteLock lock = locker.tryLock("k").orElseThrow();
            assertThatThrownBy(() -> lock.onAtRisk(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> lock.onAtRisk(listener, null)).isInstanceOf(NullPointerException.class);
            lock.release();
        }
    }
}
