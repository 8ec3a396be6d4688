package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the backend does on five healthy masters: values, round trips, push wake-up and its bounds, cancellation. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedisLockBackendTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    private static final String CHANNEL = "distlock:released";
    private static final Duration TTL = TestTimeouts.scaled(Duration.ofSeconds(5));
    private static RedisProbe probe;

    /**
     * Waiters woken by release messages alone (their poll timer is longer than the test), each master given a tenth of
     * the scaled lease to answer: on a loaded machine the default 100ms can pass, the master count as a "no", and the
     * split vote cost a second round.
     */
    private static final Map<String, String> PUSH_ONLY =
            Map.of("pollInterval", "60s", "instanceTimeout", TTL.dividedBy(10).toMillis() + "ms");

    @BeforeAll
    static void probe() {
        probe = new RedisProbe(REDIS.endpoints());
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    private static String uri(String query) {
        return "redlock://" + String.join(",", REDIS.endpoints()) + query;
    }

    private static RemoteLocker locker(String query) {
        return RemoteLockers.builder().uri(uri(query)).leaseTime(TTL).build();
    }

    @Test
    void acquire_setsTwentyRandomBytesThenTheOwner_newPerAcquisition() {
        String key = RedisProbe.uniqueKey("value");
        try (LockBackend backend = Backends.open(REDIS.endpoints(), TTL)) {
            List<String> values = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                LockRequest request = Backends.request(key, TTL);
                Lease lease = backend.tryAcquire(request).orElseThrow();
                // Granted once a majority has answered: the other SETs may still be on their way.
                Deadlines.await(
                        () -> IntStream.range(0, 5).allMatch(m -> probe.get(m, "distlock:" + key) != null),
                        Duration.ofSeconds(5),
                        () -> "the key is not set on every master");
                String value = probe.get(0, "distlock:" + key);
                assertThat(value).matches("[0-9a-f]{40}:" + java.util.regex.Pattern.quote(request.ownerId()));
                for (int m = 1; m < 5; m++) {
                    assertThat(probe.get(m, "distlock:" + key)).isEqualTo(value);
                }
                values.add(value);
                assertThat(backend.release(lease)).isTrue();
            }
            assertThat(values.get(0)).isNotEqualTo(values.get(1));
        }
    }

    @Test
    void storeRequests_acquireAndRelease_countsOneRoundTripPerMasterEach() {
        String key = RedisProbe.uniqueKey("count");
        try (LockBackend backend = Backends.open(REDIS.endpoints(), TTL)) {
            // Opening subscribes to nothing: a locker subscribes to the release channel while it waits.
            assertThat(backend.storeRequests()).hasValue(0);
            // On masters that never ran the release script, its first EVALSHA answers NOSCRIPT and is sent again
            // by EVAL: one round first, so that the count does not depend on which test ran before.
            assertThat(backend.release(
                            backend.tryAcquire(Backends.request(key, TTL)).orElseThrow()))
                    .isTrue();
            long before = backend.storeRequests().orElseThrow();
            Lease lease = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            assertThat(backend.release(lease)).isTrue();
            assertThat(backend.storeRequests().orElseThrow() - before).isEqualTo(10);
        }
    }

    @Test
    void renew_lostOnAMajority_returnsEmpty_andRenewedOtherwise() {
        String key = RedisProbe.uniqueKey("renew");
        try (LockBackend backend = Backends.open(REDIS.endpoints(), TTL)) {
            Lease lease = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            long before = lease.validUntilNanos();
            assertThat(backend.renew(lease, TTL).orElseThrow()).isGreaterThan(before);
            for (int m : List.of(0, 1, 2)) {
                probe.set(m, "distlock:" + key, "someone-else", TTL);
            }
            assertThat(backend.renew(lease, TTL)).isEmpty();
            assertThat(backend.release(lease)).isFalse();
            assertThat(probe.keys("distlock:" + key).values().stream().flatMap(List::stream))
                    .allMatch(entry -> entry.endsWith("=someone-else"))
                    .hasSize(3);
        }
    }

    @Test
    void acquire_waiterWokenByReleaseMessage_longBeforeItsPollInterval() throws Exception {
        String key = RedisProbe.uniqueKey("push");
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend waiter = Backends.open(REDIS.endpoints(), TTL, Ticker.system(), PUSH_ONLY)) {
            Lease held = holder.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            long before = waiter.storeRequests().orElseThrow();
            CompletableFuture<Optional<Lease>> next = waiter.acquireAsync(
                    Backends.request(key, TTL), Deadline.after(Duration.ofSeconds(50), Ticker.system()), Runnable::run);
            // Its first attempt is sent: it fails on the held key, and the waiter sleeps on a 60s poll timer.
            Deadlines.await(
                    () -> waiter.storeRequests().orElseThrow() - before >= 5,
                    Duration.ofSeconds(5),
                    () -> "the waiter made no attempt");
            assertThat(next).isNotDone();
            assertThat(holder.release(held)).isTrue();
            Lease got = next.get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow();
            assertThat(waiter.release(got)).isTrue();
        }
    }

    /**
     * A waiter refused before its locker listened to release messages may have missed the release that freed the key
     * between the refusals and the subscription (the test above releases in that window now and then): it attempts
     * once more when subscribed, then sleeps on its poll timer. A waiter refused while the locker listens sleeps after
     * one attempt.
     */
    @Test
    void acquire_refusedBeforeTheLockerListened_attemptsOnceMoreWhenSubscribed() throws Exception {
        String key = RedisProbe.uniqueKey("unheard");
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend waiting = Backends.open(REDIS.endpoints(), TTL, Ticker.system(), PUSH_ONLY)) {
            Lease held = holder.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            // The grant was decided by the first three SETs: the other two may still be on their way, and a late one
            // counted after this reading made 11 (seen under load, as in the herd test below).
            awaitOnEveryMaster("distlock:" + key);
            long setsBefore = probe.calls("set");
            Deadline deadline = Deadline.after(Duration.ofSeconds(50), Ticker.system());
            CompletableFuture<Optional<Lease>> first =
                    waiting.acquireAsync(Backends.request(key, TTL), deadline, Runnable::run);
            awaitQuiet(waiting);
            assertThat(probe.calls("set") - setsBefore)
                    .as("SET commands of a waiter refused before its locker subscribed")
                    .isEqualTo(10);
            CompletableFuture<Optional<Lease>> second =
                    waiting.acquireAsync(Backends.request(key, TTL), deadline, Runnable::run);
            awaitQuiet(waiting);
            assertThat(probe.calls("set") - setsBefore)
                    .as("SET commands after a second waiter, refused while the locker listens")
                    .isEqualTo(15);
            assertThat(first).isNotDone();
            assertThat(second).isNotDone();
            first.cancel(true);
            second.cancel(true);
            assertThat(holder.release(held)).isTrue();
        }
    }

    /**
     * A release publishes its key from every master that deleted it (five messages) and every locker hears them: the
     * locker wakes one of its waiters of the key, once per release, and the others keep their poll timers (every
     * waiter sending {@code SET NX} to all five masters at once is a herd that splits the votes).
     */
    @Test
    void release_withFourWaitersInOneLocker_wakesOneOfThem_oneRoundOfSets() throws Exception {
        String key = RedisProbe.uniqueKey("herd");
        int waiters = 4;
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend waiting = Backends.open(REDIS.endpoints(), TTL, Ticker.system(), PUSH_ONLY)) {
            Lease held = holder.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            // The grant was decided by the first three SETs; the other two may still be on their way, and a waiter's
            // SET NX that overtakes one there wins that master, splits its vote and leaves it free (its clean-up):
            // the holder then lacks that master, the waiters split against it and retry on back-off timers of up to
            // seconds, and one of those can fire after the release and count a second round (seen: 10 SETs).
            awaitOnEveryMaster("distlock:" + key);
            long before = waiting.storeRequests().orElseThrow();
            List<CompletableFuture<Optional<Lease>>> waits = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                waits.add(waiting.acquireAsync(
                        Backends.request(key, TTL),
                        Deadline.after(Duration.ofSeconds(50), Ticker.system()),
                        Runnable::run));
            }
            // Each made its first attempt (five SETs, refused), subscribed the locker (five SUBSCRIBEs, once) and,
            // its attempt having been made before, attempted again; it sleeps on its 60s poll timer.
            Deadlines.await(
                    () -> waiting.storeRequests().orElseThrow() - before >= 5L * waiters,
                    Duration.ofSeconds(5),
                    () -> "the waiters made no attempt");
            awaitQuiet(waiting);
            long setsBefore = probe.calls("set");
            assertThat(holder.release(held)).isTrue();
            CompletableFuture.anyOf(waits.toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            awaitQuiet(waiting);
            long sets = probe.calls("set") - setsBefore;
            List<Lease> granted = new ArrayList<>();
            for (CompletableFuture<Optional<Lease>> w : waits) {
                if (w.isDone()) {
                    granted.add(w.join().orElseThrow());
                } else {
                    w.cancel(true);
                }
            }
            assertThat(sets)
                    .as("SET commands the masters received between the release and the next grant, %d waiters", waiters)
                    .isEqualTo(5);
            assertThat(granted).hasSize(1);
            assertThat(waiting.release(granted.get(0))).isTrue();
        }
    }

    /**
     * Each master tells a release right after its delete. A waiter woken by the first message alone would send its
     * {@code SET NX} while the others may still hold the key, split the vote and try again: it is woken once a majority
     * of the masters has told the release, or {@code instanceTimeout} after the first message (a master that has not
     * deleted by then counts as a "no", and a release on a bare majority may have lost a message).
     */
    @Test
    void release_toldByOneMasterOfFive_wakesTheWaiterOnlyAfterInstanceTimeout_toldByAMajority_atOnce()
            throws Exception {
        String key = RedisProbe.uniqueKey("told");
        String redisKey = "distlock:" + key;
        Duration instanceTimeout = Duration.ofSeconds(5);
        Duration ttl = instanceTimeout.multipliedBy(20);
        try (LockBackend holder = Backends.open(REDIS.endpoints(), ttl);
                LockBackend waiting = Backends.open(
                        REDIS.endpoints(),
                        ttl,
                        Ticker.system(),
                        Map.of("pollInterval", "60s", "instanceTimeout", "5s", "retryDelay", "1ms"))) {
            Lease held = holder.tryAcquire(Backends.request(key, ttl)).orElseThrow();
            awaitOnEveryMaster(redisKey); // else the waiter can split against the holder and retry on a timer (above)
            long before = waiting.storeRequests().orElseThrow();
            CompletableFuture<Optional<Lease>> next = waiting.acquireAsync(
                    Backends.request(key, ttl),
                    Deadline.after(Duration.ofSeconds(100), Ticker.system()),
                    Runnable::run);
            Deadlines.await(
                    () -> waiting.storeRequests().orElseThrow() - before >= 5,
                    Duration.ofSeconds(5),
                    () -> "the waiter made no attempt");
            awaitQuiet(waiting);

            // A release told by master 0 alone (another release than the holder's, of the same key; master 0 keeps
            // the key, so that the waiter's attempt wins nothing there either and leaves nothing to undo).
            long quiet = waiting.storeRequests().orElseThrow();
            long toldAt = System.nanoTime();
            probe.publish(0, CHANNEL, "e".repeat(ReleaseMessages.RELEASE_ID_LENGTH) + " " + redisKey);
            Deadlines.await(
                    () -> waiting.storeRequests().orElseThrow() > quiet,
                    Duration.ofSeconds(30),
                    () -> "the waiter was never woken by a release told by one master");
            assertThat(Duration.ofNanos(System.nanoTime() - toldAt))
                    .as("woken after a release told by one master of five")
                    .isGreaterThanOrEqualTo(instanceTimeout);
            awaitQuiet(waiting);
            assertThat(next).isNotDone();

            // The holder's release: five masters delete and tell it, a majority within milliseconds.
            long releasedAt = System.nanoTime();
            assertThat(holder.release(held)).isTrue();
            Lease got = next.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow();
            assertThat(Duration.ofNanos(System.nanoTime() - releasedAt))
                    .as("granted after a release told by a majority")
                    .isLessThan(instanceTimeout);
            assertThat(waiting.release(got)).isTrue();
        }
    }

    /**
     * Contenders that raced leave the winner with a bare majority (3 of 5) and the other masters free, so a waiter
     * wins two masters at every attempt and fails: a split vote. Retried every few milliseconds for the whole hold,
     * that was hundreds of requests a second per waiter; the delay must grow to the poll interval instead.
     */
    @Test
    void acquire_againstAHolderOfABareMajority_backsOffToThePollInterval() throws Exception {
        String key = RedisProbe.uniqueKey("bare-majority");
        for (int m : List.of(0, 1, 2)) {
            probe.set(m, "distlock:" + key, "holder-of-three", Duration.ofSeconds(60));
        }
        Duration poll = Duration.ofMillis(500);
        Duration wait = Duration.ofSeconds(3);
        try (LockBackend waiting =
                Backends.open(REDIS.endpoints(), TTL, Ticker.system(), Map.of("pollInterval", "500ms"))) {
            long setsBefore = probe.calls("set");
            Optional<Lease> got = waiting.acquire(Backends.request(key, TTL), Deadline.after(wait, Ticker.system()));
            assertThat(got).isEmpty();
            long sets = probe.calls("set") - setsBefore;
            // Delays of at most 10ms, 20, 40, ... up to the poll interval, each at least half its bound: at most
            // 1 + log2(500 / 10) = 7 attempts until the bound reaches the poll interval, then one per 250ms at most.
            long attempts = 1 + 7 + wait.toMillis() / (poll.toMillis() / 2);
            assertThat(sets)
                    .as("SETs sent in %s against a holder of 3 of 5 masters", wait)
                    .isLessThanOrEqualTo(5 * attempts);
        }
    }

    /** Waits until {@code redisKey} is set on every master (a grant needs only a majority of them). */
    private static void awaitOnEveryMaster(String redisKey) {
        Deadlines.await(
                () -> IntStream.range(0, REDIS.endpoints().size()).allMatch(i -> probe.exists(i, redisKey)),
                Duration.ofSeconds(5),
                () -> redisKey + " expected on all " + REDIS.endpoints().size() + " masters");
    }

    /** Waits until the backend has sent nothing for half a second: the attempts under way have answered. */
    private static void awaitQuiet(LockBackend backend) throws InterruptedException {
        Deadlines.steady(
                () -> backend.storeRequests().orElseThrow(),
                Duration.ofMillis(500),
                TestTimeouts.scaled(Duration.ofSeconds(10)),
                "the backend's request count");
    }

    @Test
    void lock_manyKeysWaitedOn_onePubSubConnectionPerMasterPerLocker() throws Exception {
        int keys = 20;
        List<String> names = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(keys);
        try (RemoteLocker holder = locker("");
                RemoteLocker waiter = locker("")) {
            List<RemoteLock> held = new ArrayList<>();
            for (int i = 0; i < keys; i++) {
                names.add(RedisProbe.uniqueKey("many-" + i));
                held.add(holder.lock(names.get(i), TestTimeouts.scaled(Duration.ofSeconds(5))));
            }
            CountDownLatch started = new CountDownLatch(keys);
            List<Future<Boolean>> waits = new ArrayList<>();
            for (String name : names) {
                waits.add(threads.submit(() -> {
                    started.countDown();
                    try (RemoteLock l = waiter.lock(name, TestTimeouts.scaled(Duration.ofSeconds(30)))) {
                        return l.isHeld();
                    }
                }));
            }
            started.await();
            // The waiting locker is subscribed once per master, however many keys it waits on; the holder, which
            // waits on nothing, is not subscribed at all.
            Deadlines.await(
                    () -> subscribedEverywhere(1), Duration.ofSeconds(5), () -> "the lockers did not subscribe");
            assertThat(Deadlines.holdsFor(
                            Duration.ofMillis(500),
                            () -> subscribedEverywhere(1) && waits.stream().noneMatch(Future::isDone)))
                    .as("one subscriber per master while %d keys are waited on", keys)
                    .isTrue();
            held.forEach(RemoteLock::release);
            for (Future<Boolean> w : waits) {
                assertThat(w.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                        .isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void acquireAsync_cancelledWhileWaiting_leavesOnlyTheHoldersKey() throws Exception {
        String key = RedisProbe.uniqueKey("cancel");
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend waiter = Backends.open(REDIS.endpoints(), TTL)) {
            Lease held = holder.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            String value = probe.get(0, "distlock:" + key);
            CompletableFuture<Optional<Lease>> pending = waiter.acquireAsync(
                    Backends.request(key, TTL), Deadline.after(Duration.ofSeconds(30), Ticker.system()), Runnable::run);
            assertThat(pending.cancel(true)).isTrue();
            assertThat(holder.release(held)).isTrue();
            Deadlines.await(
                    () -> probe.keys("distlock:" + key).isEmpty(),
                    Duration.ofSeconds(3),
                    () -> "left behind after cancel (holder's value " + value + "): " + probe.keys("distlock:" + key));
            assertThat(Deadlines.holdsFor(Duration.ofMillis(700), () -> probe.keys("distlock:" + key)
                            .isEmpty()))
                    .as("the cancelled waiter must not take the lock once it is free")
                    .isTrue();
        }
    }

    @Test
    void acquire_interrupted_throwsAndLeavesNothing() throws Exception {
        String key = RedisProbe.uniqueKey("interrupt");
        try (LockBackend holder = Backends.open(REDIS.endpoints(), TTL);
                LockBackend waiter = Backends.open(REDIS.endpoints(), TTL)) {
            Lease held = holder.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            long before = waiter.storeRequests().orElseThrow();
            Thread t = new Thread(() -> {
                try {
                    waiter.acquire(Backends.request(key, TTL), Deadline.after(Duration.ofSeconds(30), Ticker.system()));
                    outcome.complete(null);
                } catch (Throwable e) {
                    outcome.complete(e);
                }
            });
            t.start();
            Deadlines.await(
                    () -> waiter.storeRequests().orElseThrow() - before >= 5,
                    Duration.ofSeconds(5),
                    () -> "the waiter made no attempt");
            t.interrupt();
            assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            holder.release(held);
            assertThat(probe.keys("distlock:" + key)).isEmpty();
        }
    }

    @Test
    void release_ofAnotherAcquisitionsLease_leavesTheHolder() {
        String key = RedisProbe.uniqueKey("stale");
        try (LockBackend backend = Backends.open(REDIS.endpoints(), TTL)) {
            Lease first = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            assertThat(backend.release(first)).isTrue();
            Lease second = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            assertThat(backend.release(first)).isFalse();
            assertThat(backend.renew(first, TTL)).isEmpty();
            assertThat(probe.keys("distlock:" + key)).hasSize(5);
            assertThat(backend.release(second)).isTrue();
        }
    }

    /**
     * A locker that waits for nothing hears no release, not even its own (each was a message read and a thread woken
     * per release); one that waits subscribes, and unsubscribes about a second after its last wait.
     */
    @Test
    void subscription_onlyWhileTheLockerWaits() throws Exception {
        String key = RedisProbe.uniqueKey("idle");
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (RemoteLocker holder = locker("");
                RemoteLocker waiter = locker("")) {
            for (int i = 0; i < 20; i++) {
                holder.lock(key).release();
            }
            assertThat(Deadlines.holdsFor(Duration.ofMillis(300), () -> subscribedEverywhere(0)))
                    .as("nobody waits: no locker subscribed")
                    .isTrue();
            RemoteLock held = holder.lock(key);
            Future<Boolean> wait = thread.submit(() -> {
                try (RemoteLock l = waiter.lock(key, TestTimeouts.scaled(Duration.ofSeconds(30)))) {
                    return l.isHeld();
                }
            });
            Deadlines.await(() -> subscribedEverywhere(1), Duration.ofSeconds(5), () -> "the waiter did not subscribe");
            held.release();
            assertThat(wait.get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            Deadlines.await(
                    () -> subscribedEverywhere(0),
                    Duration.ofSeconds(5),
                    () -> "the waiter was still subscribed after its wait");
        } finally {
            thread.shutdownNow();
        }
    }

    private static boolean subscribedEverywhere(long count) {
        for (int m = 0; m < 5; m++) {
            if (probe.subscribers(m, CHANNEL) != count) {
                return false;
            }
        }
        return true;
    }
}
