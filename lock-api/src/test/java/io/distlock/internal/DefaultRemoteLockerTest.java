package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockLostException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.ManualTicker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The shared machinery, driven through the in-memory backend with a manual ticker: no sleeping for leases. */
class DefaultRemoteLockerTest {

    private static final Duration LEASE = Duration.ofHours(1); // renewal never runs on its own during a test

    private final ManualTicker ticker = new ManualTicker();
    private RemoteLocker locker;
    private RemoteLocker other;

    @BeforeEach
    void open(TestInfo test) {
        String uri = "memory://" + test.getTestMethod().orElseThrow().getName();
        locker =
                RemoteLockers.builder().uri(uri).leaseTime(LEASE).ticker(ticker).build();
        other = RemoteLockers.builder().uri(uri).leaseTime(LEASE).ticker(ticker).build();
    }

    @AfterEach
    void close() {
        locker.close();
        other.close();
    }

    @Test
    void lease_runningOut_marksLockLost_andFiresOnLostOnce() throws Exception {
        RemoteLock lock = locker.lock("k", Duration.ofSeconds(1));
        AtomicInteger fired = new AtomicInteger();
        CountDownLatch firedLatch = new CountDownLatch(1);
        lock.onLost(l -> {
            fired.incrementAndGet();
            firedLatch.countDown();
        });

        ticker.advance(LEASE.plusNanos(1));

        assertThat(lock.isHeld()).isFalse();
        assertThat(lock.isHeld()).isFalse();
        assertThat(firedLatch.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
        assertThat(fired).hasValue(1);
        AtomicInteger late = new AtomicInteger();
        lock.onLost(l -> late.incrementAndGet());
        assertThat(late).as("a listener added after the loss fires at once").hasValue(1);
    }

    @Test
    void lease_runningOut_letsAnotherOwnerIn_withALargerToken() throws Exception {
        RemoteLock first = locker.lock("k", Duration.ofSeconds(1));
        assertThat(other.tryLock("k")).isEmpty();
        ticker.advance(LEASE.plusNanos(1));
        RemoteLock second = other.tryLock("k").orElseThrow();
        assertThat(second.fencingToken().getAsLong())
                .isGreaterThan(first.fencingToken().getAsLong());
        assertThat(first.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
        assertThat(second.isHeld())
                .as("the stale handle's release left the new holder alone")
                .isTrue();
        assertThat(locker.tryLock("k")).isEmpty();
        second.close();
    }

    @Test
    void release_twice_isANoOp() throws Exception {
        RemoteLock lock = locker.lock("k", Duration.ofSeconds(1));
        assertThat(lock.release()).isEqualTo(ReleaseResult.RELEASED);
        assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_RELEASED);
        lock.close();
        assertThat(lock.isHeld()).isFalse();
    }

    @Test
    void release_fromAnotherThread_isAllowed() throws Exception {
        RemoteLock lock = locker.lock("k", Duration.ofSeconds(1));
        CompletableFuture<ReleaseResult> released = CompletableFuture.supplyAsync(lock::release);
        assertThat(released.get(5, TimeUnit.SECONDS)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(other.tryLock("k")).isPresent();
    }

    @Test
    void lock_sameKeySameThread_failsAtOnce_notReentrant() throws Exception {
        try (RemoteLock held = locker.lock("k", Duration.ofSeconds(1))) {
            assertThatThrownBy(() -> locker.lock("k", Duration.ofSeconds(30)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not re-entrant");
            assertThatThrownBy(() -> locker.tryLock("k")).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> locker.lockAll(List.of("j", "k"), Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalStateException.class);
            try (RemoteLock disjoint = locker.lock("j", Duration.ofSeconds(1))) {
                assertThat(disjoint.isHeld())
                        .as("nested locks on other keys are fine")
                        .isTrue();
            }
            assertThat(held.isHeld()).isTrue();
        }
        try (RemoteLock again = locker.lock("k", Duration.ofSeconds(1))) {
            assertThat(again.isHeld())
                    .as("after release the same thread may lock it again")
                    .isTrue();
        }
    }

    @Test
    void lock_sameKeyOtherThreadOfSameLocker_waitsForTheHolder() throws Exception {
        RemoteLock held = locker.lock("k", Duration.ofSeconds(1));
        CompletableFuture<RemoteLock> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return locker.lock("k", Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(100);
        assertThat(waiter).isNotDone();
        held.close();
        RemoteLock next = waiter.get(10, TimeUnit.SECONDS);
        assertThat(next.isHeld()).isTrue();
        next.close();
    }

    @Test
    void lockAll_takesKeysInNaturalOrder_andReleasesAll() throws Exception {
        try (RemoteLockGroup group = locker.lockAll(List.of("z", "a", "m"), Duration.ofSeconds(1))) {
            assertThat(group.locks()).extracting(RemoteLock::key).containsExactly("a", "m", "z");
            assertThat(group.isHeld()).isTrue();
        }
        assertThat(other.tryLock("a")).isPresent();
        assertThat(other.tryLock("z")).isPresent();
    }

    @Test
    void lockAll_badKeySets_areRejected() {
        assertThatThrownBy(() -> locker.lockAll(List.of(), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be empty");
        assertThatThrownBy(() -> locker.lockAll(List.of("a", "b", "a"), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'a' appears twice among the 3 keys given");
        List<String> many = new java.util.ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            many.add("key-" + i);
        }
        many.add("key-7");
        assertThatThrownBy(() -> locker.lockAll(many, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Lock key 'key-7' appears twice among the 10001 keys given");
    }

    @Test
    void withLock_releasesWhenTheActionThrows() {
        assertThatThrownBy(() -> locker.withLock("k", Duration.ofSeconds(1), () -> {
                    throw new java.io.IOException("boom");
                }))
                .isInstanceOf(java.io.IOException.class)
                .hasMessage("boom");
        assertThat(other.tryLock("k")).isPresent();
    }

    @Test
    void withLock_returnsTheResult_andReportsALostLease() throws Exception {
        assertThat(locker.withLock("k", Duration.ofSeconds(1), () -> 42)).isEqualTo(42);
        assertThatThrownBy(() -> locker.withLock("k", Duration.ofSeconds(1), () -> ticker.advance(LEASE.plusNanos(1))))
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("'k' was lost");
    }

    @Test
    void lockAsync_cancelledWhileWaiting_leavesNothingHeld() throws Exception {
        RemoteLock held = locker.lock("k", Duration.ofSeconds(1));
        CompletableFuture<RemoteLock> pending = other.lockAsync("k", Duration.ofSeconds(30));
        Thread.sleep(50);
        pending.cancel(true);
        held.close();
        Optional<RemoteLock> next = locker.tryLock("k");
        // The cancelled waiter is interrupted and leaves the queue; if it had won, it released at once.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (next.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            next = locker.tryLock("k");
        }
        assertThat(next).isPresent();
    }

    @Test
    void lockAsync_completesWithTheLock() throws Exception {
        RemoteLock lock = locker.lockAsync("k", Duration.ofSeconds(1)).get(5, TimeUnit.SECONDS);
        assertThat(lock.isHeld()).isTrue();
        assertThat(locker.tryLockAsync("j").get(5, TimeUnit.SECONDS)).isPresent();
        assertThat(other.tryLockAsync("k").get(5, TimeUnit.SECONDS)).isEmpty();
    }

    @Test
    void closedLocker_rejectsEveryCall_andReleasedItsLocks() throws Exception {
        RemoteLock lock = locker.lock("k", Duration.ofSeconds(1));
        locker.close();
        locker.close();
        assertThat(lock.isHeld()).isFalse();
        assertThat(other.tryLock("k"))
                .as("close released the lock in the store")
                .isPresent();
        for (ThrowingCall call : List.<ThrowingCall>of(
                () -> locker.lock("x"),
                () -> locker.lock("x", Duration.ofSeconds(1)),
                () -> locker.tryLock("x"),
                () -> locker.lockAll(List.of("x"), Duration.ofSeconds(1)),
                () -> locker.withLock("x", Duration.ofSeconds(1), () -> 1),
                () -> locker.lockAsync("x", Duration.ofSeconds(1)),
                () -> locker.tryLockAsync("x"),
                () -> locker.capabilities())) {
            assertThatThrownBy(call::run)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
    }

    @Test
    void badKeysAndDurations_areRejectedWithClearMessages() {
        assertThatThrownBy(() -> locker.tryLock(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("must not be null");
        assertThatThrownBy(() -> locker.tryLock(" \t"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Lock key must not be blank, got ' \\u0009'");
        assertThatThrownBy(() -> locker.tryLock(" ".repeat(100_000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Lock key must not be blank, got '" + " ".repeat(40) + "...'");
        String huge = "é".repeat(RemoteLocker.MAX_KEY_BYTES / 2 + 1);
        assertThatThrownBy(() -> locker.tryLock(huge))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1026 bytes")
                .hasMessageContaining("limit is 1024");
        assertThatThrownBy(() -> locker.tryLock("\n" + huge))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1027 bytes")
                .hasMessageContaining("'\\u000a" + "é".repeat(39) + "...'")
                .hasMessageNotContaining("\n");
        assertThat(locker.tryLock("é".repeat(RemoteLocker.MAX_KEY_BYTES / 2))).isPresent();
        assertThatThrownBy(() -> locker.lock("k", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxWait must be positive");
        assertThatThrownBy(() -> locker.lock("k", Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locker.lock("k", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("maxWait");
    }

    @Test
    void key_withAnUnpairedSurrogate_isRejected_whilePairedOnesAreFine() {
        assertThatThrownBy(() -> locker.tryLock("a\uD800b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate U+D800 at index 1");
        assertThatThrownBy(() -> locker.tryLock("\uDC00"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unpaired surrogate");
        assertThat(locker.tryLock("emoji-\uD83D\uDE00")).isPresent();
    }

    @Test
    void durations_inMessages_readAsTyped() {
        assertThat(DurationText.of(Duration.ofSeconds(10))).isEqualTo("10s");
        assertThat(DurationText.of(Duration.ofMillis(50))).isEqualTo("50ms");
        assertThat(DurationText.of(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(DurationText.of(Duration.ofMinutes(90))).isEqualTo("1h30m");
        assertThat(DurationText.of(Duration.ofSeconds(61))).isEqualTo("1m1s");
        assertThatThrownBy(() -> locker.lock("k", Duration.ofSeconds(-10))).hasMessageContaining("got -10s");
    }

    @Test
    void onLost_isNotFiredOnANormalRelease() throws Exception {
        AtomicReference<RemoteLock> lost = new AtomicReference<>();
        RemoteLock lock = locker.lock("k", Duration.ofSeconds(1)).onLost(lost::set);
        lock.close();
        ticker.advance(LEASE.multipliedBy(2));
        assertThat(lock.isHeld()).isFalse();
        assertThat(lost).hasValue(null);
    }

    @FunctionalInterface
    private interface ThrowingCall {
        void run() throws Exception;
    }
}
