package io.distlock.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockConfigurationException;
import io.distlock.LockHolder;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.ManualTicker;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lock-delay and release requests on {@code memory:}, where time can be moved by hand: an unreleased grant's entry
 * outlives its validity by the delay, a released one does not; the checks of the option; a request kept for a listener
 * registered late, and none for a lock no longer held. Every backend is checked against its store by the kit.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class LockDelayAndReleaseRequestTest {

    private static final Duration LEASE = Duration.ofSeconds(5);
    private static final Duration DELAY = Duration.ofSeconds(10);

    private final String space = "memory:/delay-" + UUID.randomUUID();
    private final ManualTicker ticker = new ManualTicker();

    private LockBackend backend(Duration delay) {
        return new MemoryLockBackendProvider()
                .open(new BackendConfig(
                        URI.create(space), Map.of(), LEASE, Duration.ofSeconds(1), delay, ticker, Clock.systemUTC()));
    }

    private static LockRequest request(String owner) {
        return new LockRequest("k", owner, LEASE, reason -> {});
    }

    @Test
    void anUnreleasedGrant_keepsTheKey_forTheDelayAfterItsValidity_aReleasedOneNot() {
        LockBackend delayed = backend(DELAY);
        LockBackend other = backend(Duration.ZERO);
        Lease crashed = delayed.tryAcquire(request("a")).orElseThrow();
        assertThat(crashed.validUntilNanos() - ticker.read()).isEqualTo(LEASE.toNanos()); // validity: the lease alone
        ticker.advance(LEASE.plusMillis(1)); // its holder is gone: the lease ran out unrenewed
        assertThat(other.tryAcquire(request("b"))).isEmpty();
        assertThat(other.inspect("k").holders()).hasSize(1);
        ticker.advance(DELAY.minusMillis(2));
        assertThat(other.tryAcquire(request("b"))).isEmpty();
        ticker.advance(Duration.ofMillis(2)); // lease + delay
        Lease next = other.tryAcquire(request("b")).orElseThrow();
        assertThat(other.release(next)).isTrue();

        Lease released = delayed.tryAcquire(request("c")).orElseThrow();
        assertThat(delayed.release(released)).isTrue();
        Optional<Lease> atOnce = other.tryAcquire(request("d"));
        assertThat(atOnce).isPresent();
        other.release(atOnce.get());
    }

    /**
     * A holder that finds its lock lost by its own clock (a pause longer than its lease, its store reachable) leaves
     * the entry to the delay instead of deleting it at once, so the key is not handed on before its onLost listeners
     * run; without a delay the entry is cleaned up at once.
     */
    @Test
    void aLockFoundLostByItsHolder_keepsItsEntryForTheDelay_withoutOneIsCleanedUp() throws Exception {
        Duration longLease = Duration.ofHours(1); // no renewal in the test's real time: the ticker alone moves
        try (RemoteLocker delayed = RemoteLockers.builder()
                        .uri(space)
                        .ticker(ticker)
                        .leaseTime(longLease)
                        .lockDelay(Duration.ofMinutes(10))
                        .build();
                RemoteLocker plain = RemoteLockers.builder()
                        .uri(space)
                        .ticker(ticker)
                        .leaseTime(longLease)
                        .build();
                RemoteLocker other =
                        RemoteLockers.builder().uri(space).ticker(ticker).build()) {
            RemoteLock pausedWithDelay = delayed.lock("k");
            RemoteLock pausedWithout = plain.lock("j");
            ticker.advance(longLease.plusMillis(1)); // both paused past their lease
            assertThat(pausedWithDelay.isHeld()).isFalse();
            assertThat(pausedWithout.isHeld()).isFalse();
            Thread.sleep(300); // the clean-up runs on the locker's workers
            assertThat(other.tryLock("j"))
                    .as("without a delay: cleaned up at once")
                    .isPresent();
            assertThat(other.tryLock("k")).as("with a delay: left to it").isEmpty();
        }
    }

    @Test
    void withoutADelay_theKeyIsFree_whenTheLeaseRunsOut() {
        LockBackend plain = backend(Duration.ZERO);
        plain.tryAcquire(request("a")).orElseThrow();
        ticker.advance(LEASE);
        assertThat(plain.tryAcquire(request("b"))).isPresent();
    }

    @Test
    void theOption_isChecked_andRefusedWhereTheBackendCannotKeepIt() {
        assertThatThrownBy(() -> RemoteLockers.open(space + "?lockDelay=-1s"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("lockDelay");
        assertThatThrownBy(() -> RemoteLockers.open(space + "?lockDelay=soon"))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("lockDelay");
        assertThatThrownBy(() -> RemoteLockers.builder().lockDelay(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockDelay must not be negative");
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(space + "?lockDelay=1s")
                        .lockDelay(Duration.ofSeconds(2))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("given both");
        assertThatThrownBy(() -> RemoteLockers.builder()
                        .uri(space)
                        .provider(new LockOnlyProvider())
                        .lockDelay(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("lock-only backend offers no lock-delay")
                .hasMessageContaining("lockDelay=1s");
        try (RemoteLocker zero = RemoteLockers.builder()
                .uri(space)
                .provider(new LockOnlyProvider())
                .lockDelay(Duration.ZERO)
                .build()) {
            assertThatThrownBy(() -> zero.requestRelease("k"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("offers no asking a holder to let go");
        }
    }

    @Test
    void aRequest_beforeTheListener_isKeptForIt_andNoneReachesAReleasedLock() throws Exception {
        try (RemoteLocker holder =
                        RemoteLockers.builder().uri(space).ownerLabel("job-7").build();
                RemoteLocker operator = RemoteLockers.open(space)) {
            RemoteLock lock = holder.lock("k");
            List<LockHolder> asked = operator.requestRelease("k");
            assertThat(asked).extracting(LockHolder::ownerLabel).containsExactly("job-7");
            CompletableFuture<RemoteLock> heard = new CompletableFuture<>();
            lock.onReleaseRequested(heard::complete);
            assertThat(heard.get(10, TimeUnit.SECONDS)).isSameAs(lock);
            assertThat(lock.isHeld()).isTrue(); // the holder decides

            AtomicInteger late = new AtomicInteger();
            lock.onReleaseRequested(l -> late.incrementAndGet());
            lock.release();
            assertThat(operator.requestRelease("k")).isEmpty();
            lock.onReleaseRequested(l -> late.incrementAndGet());
            Thread.sleep(100);
            assertThat(late).hasValue(0);
        }
    }
}
