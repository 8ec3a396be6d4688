package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.ManualTicker;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** Loss as the store decides it, and renewals that nothing else can hold up; on the real in-memory store. */
class LossAndRenewalTest {

    private static final Duration LONG_LEASE = Duration.ofHours(1);
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ManualTicker ticker = new ManualTicker();

    private static String uri(TestInfo test) {
        return "memory://loss-" + test.getTestMethod().orElseThrow().getName();
    }

    private RemoteLocker manual(TestInfo test, HookedProvider hooked) {
        return RemoteLockers.builder()
                .uri(uri(test))
                .provider(hooked)
                .leaseTime(LONG_LEASE)
                .ticker(ticker)
                .build();
    }

    @Test
    void tryLock_whoseGrantArrivesAfterItsLease_returnsEmpty_andReleasesTheStaleGrant(TestInfo test) {
        HookedProvider hooked = new HookedProvider();
        hooked.afterGrant = lease -> ticker.advance(LONG_LEASE.plusSeconds(1)); // the reply was that late
        try (RemoteLocker locker = manual(test, hooked)) {
            assertThat(locker.tryLock("k")).isEmpty();
            assertThat(hooked.releases("k")).as("the stale grant was released").isEqualTo(1);
        }
    }

    @Test
    void lock_whoseFirstGrantArrivesAfterItsLease_triesAgain_andHandsOverAValidLock(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        AtomicInteger grants = new AtomicInteger();
        hooked.afterGrant = lease -> {
            if (grants.incrementAndGet() == 1) {
                ticker.advance(LONG_LEASE.plusSeconds(1));
            }
        };
        try (RemoteLocker locker = manual(test, hooked)) {
            RemoteLock lock = locker.lock("k", LONG_LEASE.multipliedBy(3));
            assertThat(grants).hasValue(2);
            assertThat(lock.isHeld()).isTrue();
            assertThat(hooked.releases("k")).isEqualTo(1);
            assertThat(lock.release()).isEqualTo(ReleaseResult.RELEASED);
        }
    }

    @Test
    void tryLock_lostBeforeItWasHandedOver_returnsEmpty_andLeavesTheKeyFree(TestInfo test) {
        HookedProvider hooked = new HookedProvider();
        hooked.afterGrant = lease -> hooked.lossListeners.get(lease.key()).leaseLost("dropped by the store");
        try (RemoteLocker locker = manual(test, hooked)) {
            assertThat(locker.tryLock("k")).isEmpty();
            hooked.afterGrant = lease -> {};
            assertThat(locker.tryLock("k")).as("the lost grant was freed").isPresent();
        }
    }

    @Test
    void tryLock_whenTheClientLibraryThrowsItsOwnIllegalStateException_throwsLockBackendException(TestInfo test) {
        HookedProvider hooked = new HookedProvider();
        IllegalStateException clientsOwn = new IllegalStateException("client is closed"); // as Curator's does
        hooked.afterGrant = lease -> {
            throw clientsOwn;
        };
        try (RemoteLocker locker = manual(test, hooked)) {
            assertThatThrownBy(() -> locker.tryLock("k"))
                    .isInstanceOf(LockBackendException.class)
                    .hasCause(clientsOwn);
        }
    }

    @Test
    void lockAll_group_reportsTheLossOfAnyOfItsLocks_once(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        try (RemoteLocker locker = manual(test, hooked)) {
            RemoteLockGroup group = locker.lockAll(List.of("a", "b"), WAIT);
            AtomicInteger fired = new AtomicInteger();
            CountDownLatch firedLatch = new CountDownLatch(1);
            group.onLost(g -> {
                fired.incrementAndGet();
                firedLatch.countDown();
            });

            hooked.lossListeners.get("b").leaseLost("deleted out of band");
            hooked.lossListeners.get("a").leaseLost("deleted out of band");

            assertThat(group.isHeld()).isFalse();
            assertThat(firedLatch.await(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS))
                    .isTrue();
            AtomicInteger late = new AtomicInteger();
            group.onLost(g -> late.incrementAndGet());
            assertThat(late).as("a listener added after the loss runs at once").hasValue(1);
            assertThat(fired).hasValue(1);
            group.close();
        }
    }

    @Test
    void lockAll_firstLockLostWhileTheNextIsAwaited_failsWithTheStoresError_andLeavesNoneHeld(TestInfo test)
            throws Exception {
        HookedProvider hooked = new HookedProvider();
        hooked.afterGrant = lease -> {
            if (lease.key().equals("b")) { // 'a' could not be renewed while 'b' was awaited, say through an outage
                hooked.lossListeners.get("a").leaseLost("its lease ran out before it was renewed");
            }
        };
        try (RemoteLocker locker = manual(test, hooked);
                RemoteLocker other = manual(test, new HookedProvider())) {
            assertThatThrownBy(() -> locker.lockAll(List.of("a", "b"), WAIT))
                    .as("a group whose first lock is already lost is no group of held locks")
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("'a'");
            assertThat(hooked.releases("b")).as("'b', granted last, released").isEqualTo(1);
            // 'b' is released before lockAll throws; the lost 'a' is freed in the background, so it may take a moment
            for (String key : List.of("a", "b")) {
                AtomicReference<RemoteLock> taken = new AtomicReference<>();
                Waits.until("'" + key + "' to be free after the failed lockAll", WAIT, () -> {
                    other.tryLock(key).ifPresent(taken::set);
                    return taken.get() != null;
                });
                taken.get().release();
            }
        }
    }

    @Test
    void withLock_bodyFailingAfterTheLeaseWasLost_carriesASuppressedLockLostException(TestInfo test) {
        try (RemoteLocker locker = manual(test, new HookedProvider())) {
            assertThatThrownBy(() -> locker.withLock("k", WAIT, () -> {
                        ticker.advance(LONG_LEASE.plusSeconds(1));
                        throw new IOException("the guarded work failed");
                    }))
                    .isInstanceOf(IOException.class)
                    .satisfies(e ->
                            assertThat(e.getSuppressed()).hasSize(1).hasOnlyElementsOfType(LockLostException.class));
        }
    }

    @Test
    void onLost_withAnExecutor_runsThere(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        AtomicReference<String> ranOn = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        Executor named = task -> new Thread(task, "users-own-executor").start();
        try (RemoteLocker locker = manual(test, hooked)) {
            RemoteLock lock = locker.lock("k", WAIT);
            lock.onLost(
                    l -> {
                        ranOn.set(Thread.currentThread().getName());
                        ran.countDown();
                    },
                    named);
            hooked.lossListeners.get("k").leaseLost("deleted out of band");
            assertThat(ran.await(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS))
                    .isTrue();
            assertThat(ranOn.get()).isEqualTo("users-own-executor");
        }
    }

    /**
     * A grant that reaches the caller with less than a third of its lease left (slow fencing writes, a slow hand-over)
     * is renewed at once, not a third of the lease after adoption, by which time it would have run out.
     */
    @Test
    void lock_grantedWithLessThanAThirdOfItsLeaseLeft_isRenewedAtOnce_andKept(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        hooked.afterGrant = lease -> ticker.advance(LONG_LEASE.multipliedBy(4).dividedBy(5)); // a fifth left
        try (RemoteLocker locker = manual(test, hooked)) {
            RemoteLock lock = locker.lock("k", WAIT);
            // Until the renewal's answer is recorded (the hook counts a renewal when it is sent): under load the
            // ticker was otherwise moved past the grant between the two, and the lock found lost
            Waits.until(
                    "a renewal of the late grant, recorded",
                    WAIT,
                    () -> hooked.renewals("k") >= 1
                            && lock.validUntil().isAfter(java.time.Instant.now().plus(LONG_LEASE.dividedBy(2))));
            ticker.advance(LONG_LEASE.dividedBy(2)); // past the grant's own validity
            assertThat(lock.isHeld()).as("held on the renewed lease").isTrue();
            assertThat(lock.release()).isEqualTo(ReleaseResult.RELEASED);
        }
    }

    /** A listener that blocks must not stop a healthy lock with a short lease from being renewed. */
    @Test
    void slowOnLostListener_doesNotDelayTheRenewalOfAnotherLock(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        CountDownLatch listenerMayEnd = new CountDownLatch(1);
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(uri(test))
                .provider(hooked)
                .leaseTime(Duration.ofSeconds(2))
                .build()) {
            RemoteLock healthy = locker.lock("healthy", WAIT);
            RemoteLock doomed = locker.lock("doomed", WAIT);
            doomed.onLost(l -> awaitQuietly(listenerMayEnd));
            hooked.lossListeners.get("doomed").leaseLost("deleted out of band");
            try {
                int before = hooked.renewals("healthy");
                Waits.until(
                        "three renewals of the healthy lock while a listener blocks",
                        WAIT,
                        () -> hooked.renewals("healthy") >= before + 3);
                assertThat(healthy.isHeld()).isTrue();
            } finally {
                listenerMayEnd.countDown();
            }
        }
    }

    /** A renewal stuck in the store must not stop another lock from being renewed. */
    @Test
    void blockedRenewal_doesNotDelayTheRenewalOfAnotherLock(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        CountDownLatch storeAnswers = new CountDownLatch(1);
        hooked.beforeRenew = lease -> {
            if (lease.key().equals("stuck")) {
                awaitQuietly(storeAnswers);
            }
            return Optional.<OptionalLong>empty();
        };
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri(uri(test))
                .provider(hooked)
                .leaseTime(Duration.ofSeconds(2))
                .build()) {
            locker.lock("stuck", WAIT);
            RemoteLock healthy = locker.lock("healthy", WAIT);
            try {
                Waits.until("the stuck renewal to start", WAIT, () -> hooked.renewals("stuck") >= 1);
                int before = hooked.renewals("healthy");
                Waits.until(
                        "three renewals of the healthy lock while another renewal hangs",
                        WAIT,
                        () -> hooked.renewals("healthy") >= before + 3);
                assertThat(healthy.isHeld()).isTrue();
            } finally {
                storeAnswers.countDown();
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
