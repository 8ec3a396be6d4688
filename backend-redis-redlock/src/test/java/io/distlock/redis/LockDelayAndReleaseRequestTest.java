package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lock-delay and release requests on three masters. Lock-delay: every entry lives its lease plus the delay (on the grant
 * and on every renewal), the holder's validity stays the lease's, a release frees the key at once, and a lease that runs
 * out unreleased keeps the key from a waiter until lease + delay, after which the waiter's poll takes it. Release
 * requests: a cell per holder, written on every master that holds it, read and deleted by the holder's renewal there,
 * told to its locker once per request whatever the number of masters that carried it; nothing written for a free key,
 * nothing heard by a later holder; the bound measured through the locker.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class LockDelayAndReleaseRequestTest {

    private static final Logger log = LoggerFactory.getLogger(LockDelayAndReleaseRequestTest.class);

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(3).build();

    private static final Duration TTL = TestTimeouts.scaled(Duration.ofSeconds(3));
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

    /** A lease loss listener that counts the release requests told. */
    private static final class Requests implements LeaseLossListener {
        final AtomicInteger heard = new AtomicInteger();

        @Override
        public void leaseLost(String reason) {}

        @Override
        public void releaseRequested() {
            heard.incrementAndGet();
        }
    }

    private static LockRequest request(String key, LockKind kind, Requests requests) {
        return new LockRequest(
                key,
                UUID.randomUUID() + ".test",
                TTL,
                requests,
                kind,
                kind == LockKind.READ ? LockRequest.UNBOUNDED : 1);
    }

    @Test
    void requestRelease_heldLock_eachRenewalToldOncePerRequest_overThreeMasters() {
        String key = RedisProbe.uniqueKey("asked");
        Requests requests = new Requests();
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend operator = Backends.open(REDIS.endpoints(), TTL)) {
            LockRequest request = request(key, LockKind.LOCK, requests);
            Lease lease = holder.tryAcquire(request).orElseThrow();
            awaitOnEveryMaster("distlock:" + key);

            List<LockHolder> asked = operator.requestRelease(key);
            assertThat(asked).extracting(LockHolder::ownerId).containsExactly(request.ownerId());
            assertThat(requests.heard)
                    .as("nothing pushes a request: the renewal reads it")
                    .hasValue(0);

            holder.renew(lease, TTL).orElseThrow();
            awaitHeard(requests, 1, "the renewal reads the request on three masters and tells the lease once");
            awaitNoRequestsLeft(key);
            holder.renew(lease, TTL).orElseThrow();
            assertThat(requests.heard)
                    .as("a request read is deleted: the next renewal tells nothing")
                    .hasValue(1);

            operator.requestRelease(key);
            operator.requestRelease(key);
            holder.renew(lease, TTL).orElseThrow();
            awaitHeard(requests, 3, "two requests between two renewals are told twice");
            assertThat(holder.release(lease)).isTrue();
        }
    }

    @Test
    void requestRelease_readShare_itsRenewalTellsIt() {
        String key = RedisProbe.uniqueKey("asked-read");
        Requests first = new Requests();
        Requests second = new Requests();
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend operator = Backends.open(REDIS.endpoints(), TTL)) {
            Lease one = holder.tryAcquire(request(key, LockKind.READ, first)).orElseThrow();
            Lease two = holder.tryAcquire(request(key, LockKind.READ, second)).orElseThrow();
            Deadlines.await(() -> operator.inspect(key).holders().size() == 2, SLACK, () -> "two readers shown");

            assertThat(operator.requestRelease(key)).hasSize(2);
            holder.renew(one, TTL).orElseThrow();
            awaitHeard(first, 1, "the reader renewed hears the request");
            assertThat(second.heard).as("the other reader has not renewed yet").hasValue(0);
            holder.renew(two, TTL).orElseThrow();
            awaitHeard(second, 1, "the other reader hears it at its own renewal");
            holder.release(one);
            holder.release(two);
        }
    }

    @Test
    void requestRelease_freeKey_writesNothing_andALaterHolderHearsNothing() {
        String key = RedisProbe.uniqueKey("asked-free");
        Requests earlier = new Requests();
        Requests later = new Requests();
        try (LockBackend backend = Backends.open(REDIS.endpoints(), TTL);
                LockBackend operator = Backends.open(REDIS.endpoints(), TTL)) {
            assertThat(operator.requestRelease(key))
                    .as("a free key has nobody to ask")
                    .isEmpty();
            assertThat(probe.keys("distlock:" + key))
                    .as("and nothing is written")
                    .isEmpty();

            Lease first =
                    backend.tryAcquire(request(key, LockKind.LOCK, earlier)).orElseThrow();
            awaitOnEveryMaster("distlock:" + key);
            assertThat(operator.requestRelease(key)).hasSize(1);
            assertThat(backend.release(first)).isTrue(); // released before any renewal read the request

            Lease second =
                    backend.tryAcquire(request(key, LockKind.LOCK, later)).orElseThrow();
            backend.renew(second, TTL).orElseThrow();
            backend.renew(second, TTL).orElseThrow();
            assertThat(later.heard)
                    .as("the request named the earlier holder's value")
                    .hasValue(0);
            assertThat(earlier.heard).hasValue(0);
            backend.release(second);
        }
    }

    /**
     * The bound, through the locker: the holder's listener runs within a third of the lease (its renewal period) and a
     * renewal's round trip of the request. Logs each delay and the median.
     */
    @Test
    void requestRelease_throughTheLocker_listenerRunsWithinAThirdOfTheLeasePlusARenewal_measured() throws Exception {
        String uri = "redlock://" + String.join(",", REDIS.endpoints());
        Duration bound = TTL.dividedBy(3).plus(SLACK);
        List<Long> delays = new ArrayList<>();
        try (RemoteLocker holder =
                        RemoteLockers.builder().uri(uri).leaseTime(TTL).build();
                RemoteLocker operator =
                        RemoteLockers.builder().uri(uri).leaseTime(TTL).build()) {
            for (int round = 0; round < 5; round++) {
                String key = RedisProbe.uniqueKey("asked-bound");
                BlockingQueue<Long> heard = new ArrayBlockingQueue<>(4);
                RemoteLock lock = holder.tryLock(key).orElseThrow();
                lock.onReleaseRequested(l -> heard.add(System.nanoTime()));
                Thread.sleep((long) (Math.random() * TTL.dividedBy(3).toMillis())); // anywhere in the renewal period
                long asked = System.nanoTime();
                assertThat(operator.requestRelease(key)).hasSize(1);
                Long at = heard.poll(bound.toMillis() * 2, TimeUnit.MILLISECONDS);
                assertThat(at).as("the listener ran").isNotNull();
                long delay = TimeUnit.NANOSECONDS.toMillis(at - asked);
                delays.add(delay);
                assertThat(Duration.ofMillis(delay))
                        .as("within a third of the lease and a renewal")
                        .isLessThanOrEqualTo(bound);
                assertThat(heard.poll(TTL.dividedBy(3).toMillis() + 200, TimeUnit.MILLISECONDS))
                        .as("once: the next renewal tells nothing")
                        .isNull();
                lock.release();
            }
        }
        List<Long> sorted = delays.stream().sorted().toList();
        log.info(
                "Release request to listener, lease {} ms over 3 masters: {} ms (median {} ms, bound {} ms)",
                TTL.toMillis(),
                delays,
                sorted.get(sorted.size() / 2),
                bound.toMillis());
    }

    private static void awaitOnEveryMaster(String redisKey) {
        Deadlines.await(
                () -> REDIS.endpoints().stream()
                        .allMatch(e -> probe.keys(redisKey).containsKey(e)),
                SLACK,
                () -> "the lock set on every master: " + probe.keys(redisKey));
    }

    private static void awaitHeard(Requests requests, int count, String what) {
        Deadlines.await(() -> requests.heard.get() >= count, SLACK, () -> what + ": heard " + requests.heard);
        assertThat(requests.heard).as(what).hasValue(count);
    }

    /** The renewal deleted the request on every master: the key's request hash is gone (its last field deleted). */
    private static void awaitNoRequestsLeft(String key) {
        Deadlines.await(
                () -> probe.keys("distlock:" + key).values().stream()
                        .flatMap(List::stream)
                        .noneMatch(entry -> entry.contains("rq=")),
                SLACK,
                () -> "no request left: " + probe.keys("distlock:" + key));
    }
}
