package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockHolder;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock-delay on three masters: every entry lives its lease plus the delay (on the grant and on every renewal), the
 * holder's validity stays the lease's, a release frees the key at once, and a lease that runs out unreleased keeps the
 * key from a waiter until lease + delay, after which the waiter's poll takes it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LockDelayTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(3).build();

    private static final Duration TTL = TestTimeouts.scaled(Duration.ofSeconds(2));
    private static final Duration DELAY = TestTimeouts.scaled(Duration.ofSeconds(3));
    /** What a loaded machine may add to a step: a command's answer, a waiter's wake-up. */
    private static final Duration SLACK = TestTimeouts.scaled(Duration.ofMillis(500));

    private static RedisProbe probe;

    @BeforeAll
    static void probe() {
        probe = new RedisProbe(REDIS.endpoints());
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    @Test
    void acquireAndRenew_withLockDelay_entryLivesLeasePlusDelay_validityTheLeaseAlone() {
        String key = RedisProbe.uniqueKey("delay-ttl");
        String redisKey = "distlock:" + key;
        try (LockBackend backend = Backends.open(REDIS.endpoints(), TTL, DELAY)) {
            Lease lease = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            assertThat(lease.validUntilNanos() - System.nanoTime()).isLessThanOrEqualTo(TTL.toNanos());
            awaitEntryLivesPastTheLease(redisKey, "after the grant");

            long renewedUntil = backend.renew(lease, TTL).orElseThrow();
            assertThat(renewedUntil - System.nanoTime()).isLessThanOrEqualTo(TTL.toNanos());
            awaitEntryLivesPastTheLease(redisKey, "after the renewal");

            Instant now = Instant.now();
            LockHolder holder = backend.inspect(key).holders().get(0);
            assertThat(holder.leaseEnds()).hasValueSatisfying(end -> assertThat(end)
                    .as("inspection shows the entry's end as the masters keep it: lease + delay")
                    .isAfter(now.plus(TTL)));

            assertThat(backend.release(lease)).isTrue();
            Deadlines.await(
                    () -> masters().allMatch(m -> !probe.exists(m, redisKey)),
                    SLACK,
                    () -> "a release deletes at once, the delay notwithstanding");
            assertThat(backend.tryAcquire(Backends.request(key, TTL)))
                    .as("a released key is free at once")
                    .isPresent();
        }
    }

    @Test
    void leaseRunsOutUnreleased_withLockDelay_waiterGrantedAfterLeasePlusDelayByItsPoll() throws Exception {
        String key = RedisProbe.uniqueKey("delay-wait");
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL, DELAY);
                LockBackend waiter = Backends.open(REDIS.endpoints(), TTL)) {
            long granted = System.nanoTime();
            holder.tryAcquire(Backends.request(key, TTL)).orElseThrow(); // never renewed nor released: abandoned
            Optional<Lease> next = waiter.acquire(
                    Backends.request(key, TTL),
                    Deadline.after(TTL.plus(DELAY).plus(TTL).plus(SLACK), Ticker.system()));
            Duration waited = Duration.ofNanos(System.nanoTime() - granted);

            assertThat(next).as("granted once the entry ran out").isPresent();
            assertThat(waited)
                    .as("nobody is granted the key before lease + delay")
                    .isGreaterThanOrEqualTo(TTL.plus(DELAY).minusMillis(50));
            // The waiter polls every quarter of the ttl (no release message comes from an entry that runs out).
            assertThat(waited)
                    .as("the waiter's poll takes it soon after")
                    .isLessThanOrEqualTo(TTL.plus(DELAY).plus(TTL.dividedBy(4)).plus(SLACK));
            waiter.release(next.get());
        }
    }

    private static IntStream masters() {
        return IntStream.range(0, REDIS.endpoints().size());
    }

    private static void awaitEntryLivesPastTheLease(String redisKey, String when) {
        Deadlines.await(
                () -> masters().allMatch(m -> probe.pttl(m, redisKey) > TTL.toMillis()),
                SLACK,
                () -> "every master keeps the entry for lease + delay " + when + ": "
                        + masters().mapToObj(m -> probe.pttl(m, redisKey)).toList() + " ms");
    }
}
