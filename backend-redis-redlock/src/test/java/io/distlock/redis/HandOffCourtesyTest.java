package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.RedisServers;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The releaser's courtesy on one real Redis: a locker that releases a key others wait for, and asks for it again at
 * once, lets the waiter its release woke have it, and has it back when its turn comes round; a locker whose grants
 * never waited does not pause.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class HandOffCourtesyTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(1).build();

    private static final Duration TTL = TestTimeouts.scaled(Duration.ofSeconds(30));
    private static final String CHANNEL = "distlock:released";

    private static LockBackend open(Duration courtesy) {
        return Backends.open(REDIS.endpoints(), TTL, Ticker.system(), Map.of("courtesy", courtesy.toMillis() + "ms"));
    }

    /** A locker whose waiters poll only once a minute: they are woken by release messages alone. */
    private static LockBackend openWokenByMessagesOnly(Duration courtesy) {
        return Backends.open(
                REDIS.endpoints(),
                TTL,
                Ticker.system(),
                Map.of("courtesy", courtesy.toMillis() + "ms", "pollInterval", "60s"));
    }

    private static CompletableFuture<Optional<Lease>> acquire(LockBackend backend, String key) {
        return backend.acquireAsync(Backends.request(key, TTL), Deadline.after(TTL, Ticker.system()), Runnable::run);
    }

    /**
     * Two lockers each take the key four times, holding it for a while each time. Both first find it held (by a grant
     * to b taken before), so every grant is one that had to wait, and each holder asks again at once after its
     * release: with the courtesy the waiter the release woke gets the key, so the grants alternate. Without it the
     * releaser's own {@code SET NX} leaves before the woken waiter's and wins most races, and the same locker is granted
     * twice in a row. The courtesy is far longer than a woken waiter needs on a loaded machine (with 200 ms, under load
     * 12 on 2 cores, the grants went a, a, a, a, b, b, b, b once in ten runs); the releaser's turn, the other's
     * release, ends its wait, so the test never waits it out.
     */
    @Test
    void release_ofAContendedKey_thenAskingAgainAtOnce_letsTheWokenWaiterHaveIt() throws Exception {
        String key = RedisProbe.uniqueKey("courtesy");
        Duration courtesy = TestTimeouts.scaled(Duration.ofSeconds(10));
        Duration hold = TestTimeouts.scaled(Duration.ofMillis(300));
        List<String> grants = Collections.synchronizedList(new ArrayList<>());
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend a = open(courtesy);
                LockBackend b = open(courtesy)) {
            Lease first = b.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            long sets = probe.calls("set");
            List<Future<?>> lockers = new ArrayList<>();
            for (Map.Entry<String, LockBackend> locker : Map.of("a", a, "b", b).entrySet()) {
                lockers.add(threads.submit(() -> {
                    for (int i = 0; i < 4; i++) {
                        Lease lease = locker.getValue()
                                .acquire(Backends.request(key, TTL), Deadline.after(TTL, Ticker.system()))
                                .orElseThrow();
                        grants.add(locker.getKey());
                        Thread.sleep(hold.toMillis());
                        assertThat(locker.getValue().release(lease)).isTrue();
                    }
                    return null;
                }));
            }
            Deadlines.await(
                    () -> probe.calls("set") >= sets + 2, Duration.ofSeconds(10), () -> "the lockers made no attempt");
            assertThat(b.release(first)).isTrue();
            for (Future<?> locker : lockers) {
                locker.get(TTL.toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(grants).hasSize(8);
        for (int i = 1; i < grants.size(); i++) {
            assertThat(grants.get(i))
                    .as("grant %d of %s: the releaser took the key back from the waiter it woke", i, grants)
                    .isNotEqualTo(grants.get(i - 1));
        }
    }

    /**
     * Three lockers take the key in a loop, releasing and asking again at once, under a courtesy far longer than a
     * hand-off, until it was granted 24 times. Once each has seen the others release, the key goes round: a locker's
     * turn comes with the release of the last of its two rivals, so the grants repeat one order, and no acquisition
     * waits for the courtesy's end. Without the turns the three sit out their courtesies together after the first
     * round and the key lies free: an acquisition waits until its deadline (a quarter of the courtesy), where its last
     * attempt finds the key free.
     */
    @Test
    void release_ofAKeyThreeLockersTakeInALoop_handsItRoundWithoutWaitingForTheCourtesy() throws Exception {
        String key = RedisProbe.uniqueKey("turns");
        Duration longCourtesy = TestTimeouts.scaled(Duration.ofSeconds(20));
        Duration deadline = longCourtesy.dividedBy(4);
        int grantsWanted = 24;
        List<String> grants = Collections.synchronizedList(new ArrayList<>());
        List<Duration> waits = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean done = new AtomicBoolean();
        ExecutorService threads = Executors.newFixedThreadPool(3);
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend a = openWokenByMessagesOnly(longCourtesy);
                LockBackend b = openWokenByMessagesOnly(longCourtesy);
                LockBackend c = openWokenByMessagesOnly(longCourtesy)) {
            Lease first = a.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            long sets = probe.calls("set");
            List<Future<?>> lockers = new ArrayList<>();
            for (Map.Entry<String, LockBackend> locker :
                    Map.of("a", a, "b", b, "c", c).entrySet()) {
                lockers.add(threads.submit(() -> {
                    while (!done.get()) {
                        long asked = System.nanoTime();
                        Optional<Lease> lease = locker.getValue()
                                .acquire(Backends.request(key, TTL), Deadline.after(deadline, Ticker.system()));
                        synchronized (grants) {
                            if (lease.isPresent() && grants.size() < grantsWanted) {
                                grants.add(locker.getKey());
                                waits.add(Duration.ofNanos(System.nanoTime() - asked));
                                done.set(grants.size() == grantsWanted);
                            }
                        }
                        if (lease.isPresent()) {
                            assertThat(locker.getValue().release(lease.get())).isTrue();
                        }
                    }
                    return null;
                }));
            }
            awaitSets(probe, sets + 3);
            awaitSubscribers(probe, 3);
            assertThat(a.release(first)).isTrue();
            for (Future<?> locker : lockers) {
                locker.get(TTL.toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(grants).hasSize(grantsWanted);
        assertThat(waits)
                .as("how long each of the grants %s waited", grants)
                .allMatch(wait -> wait.compareTo(deadline.dividedBy(2)) < 0);
        List<String> lastRounds = grants.subList(grants.size() - 9, grants.size());
        for (int i = 3; i < lastRounds.size(); i++) {
            assertThat(lastRounds.get(i))
                    .as("the last three rounds of %s go round in one order", grants)
                    .isEqualTo(lastRounds.get(i - 3));
        }
        assertThat(lastRounds.subList(0, 3))
                .as("the last three rounds of %s", grants)
                .doesNotHaveDuplicates();
    }

    /**
     * Lockers a and c hand the key to each other by turns, each asking again at once after its release, so that each
     * waits in its courtesy for its turn; then b, which never held the key, waits for it too. Having found the key
     * held, b's waiter says so, and b is a rival of a and c from then on: c's release is not a's turn (a's turn waits
     * for b's release too), so it wakes b's waiter alone, one SET, and b has the key; b's release is a's turn, a's
     * release c's. Counting as rivals only the lockers seen releasing, c's release was a's turn: a's waiter and b's
     * raced, and a and c could hand the key to each other past b for good (seen in CI: a, c, a, c for 24 grants).
     */
    @Test
    void release_byOneOfTwoLockersTakingTurns_whileAThirdThatNeverHeldTheKeyWaits_wakesTheThirdAlone()
            throws Exception {
        String key = RedisProbe.uniqueKey("never-held");
        Duration longCourtesy = TestTimeouts.scaled(Duration.ofSeconds(20));
        Duration answer = TestTimeouts.scaled(Duration.ofSeconds(10));
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend a = openWokenByMessagesOnly(longCourtesy);
                LockBackend b = openWokenByMessagesOnly(longCourtesy);
                LockBackend c = openWokenByMessagesOnly(longCourtesy)) {
            // a and c each take the key from the other after waiting for it, so each has seen the other release it.
            Lease held = takenAfterWaiting(probe, a, c, key);
            CompletableFuture<Optional<Lease>> aWaits = waitsThenReleased(probe, a, key, 2, c, held);
            CompletableFuture<Optional<Lease>> cTurn = acquire(c, key); // in c's courtesy: waits for a's release
            held = aWaits.get(answer.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            assertThat(a.release(held)).isTrue();
            CompletableFuture<Optional<Lease>> aTurn = acquire(a, key); // in a's courtesy: waits for c's release
            held = cTurn.get(answer.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();

            // b waits: it finds the key held, and says so (one PUBLISH; without it, b would be heard only releasing).
            long sets = probe.calls("set");
            long published = probe.calls("publish");
            CompletableFuture<Optional<Lease>> bWaits = acquire(b, key);
            awaitSets(probe, sets + 1);
            awaitSubscribers(probe, 3);
            Deadlines.within(answer, () -> probe.calls("publish") > published);

            sets = probe.calls("set");
            assertThat(c.release(held)).isTrue();
            CompletableFuture<Optional<Lease>> cNext = acquire(c, key); // in c's courtesy again
            CompletableFuture.anyOf(bWaits, aTurn).get(answer.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(bWaits)
                    .as("c released while b, which never held the key, waited: b's waiter has it, not a's turn")
                    .isDone();
            assertThat(probe.calls("set") - sets)
                    .as("SETs after c's release: b's alone")
                    .isEqualTo(1);
            assertThat(aTurn).isNotDone();

            sets = probe.calls("set");
            assertThat(b.release(bWaits.join().orElseThrow())).isTrue(); // a's turn: b and c released since a did
            held = aTurn.get(answer.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            assertThat(probe.calls("set") - sets)
                    .as("SETs after b's release: a's alone")
                    .isEqualTo(1);
            assertThat(cNext).isNotDone();

            sets = probe.calls("set");
            assertThat(a.release(held)).isTrue(); // c's turn: b and a released since c did
            held = cNext.get(answer.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            assertThat(probe.calls("set") - sets)
                    .as("SETs after a's release: c's alone")
                    .isEqualTo(1);
            assertThat(c.release(held)).isTrue();
        }
    }

    /**
     * Locker x holds a key it waited for longer than a locker listens to release messages after its last wait, so it
     * stops listening; then it releases the key to y's waiter and asks again at once, waiting in its courtesy for its
     * turn, y's release. x listens again from its release on, so it hears y's release and has the key at once. Before,
     * nothing in the courtesy's wait listened, and x waited out the whole courtesy (seen as 10 s waits of
     * release_ofAContendedKey_thenAskingAgainAtOnce_letsTheWokenWaiterHaveIt under load).
     */
    @Test
    void release_ofAContendedLeaseHeldLongerThanTheLockerListens_thenAskingAgain_hearsItsTurn() throws Exception {
        String key = RedisProbe.uniqueKey("stopped-listening");
        Duration longCourtesy = TestTimeouts.scaled(Duration.ofSeconds(20));
        Duration answer = TestTimeouts.scaled(Duration.ofSeconds(10));
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend x = openWokenByMessagesOnly(longCourtesy);
                LockBackend y = openWokenByMessagesOnly(longCourtesy)) {
            Lease held = takenAfterWaiting(probe, y, x, key); // x waited: its lease is contended
            Deadlines.await(
                    () -> probe.subscribers(0, CHANNEL) == 0,
                    answer,
                    () -> "x, holding the key with no waiter, still listening");

            CompletableFuture<Optional<Lease>> yWaits = waitsThenReleased(probe, y, key, 1, x, held);
            CompletableFuture<Optional<Lease>> xTurn = acquire(x, key); // in x's courtesy: waits for y's release
            Lease yHeld = yWaits.get(answer.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
            assertThat(y.release(yHeld)).isTrue();
            Lease xHeld = xTurn.get(longCourtesy.toMillis() / 2, TimeUnit.MILLISECONDS)
                    .orElseThrow();
            assertThat(x.release(xHeld)).isTrue();
        }
    }

    /**
     * Every value a locker sets starts with the same 16 characters, its own (a release message names the first 40, so
     * that the others can tell which locker released); the rest differs per acquisition.
     */
    @Test
    void values_startWithTheLockersOwnPart_andDifferPerAcquisition() throws Exception {
        String key = RedisProbe.uniqueKey("values");
        List<String> values = new ArrayList<>();
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend a = open(Duration.ZERO);
                LockBackend b = open(Duration.ZERO)) {
            for (LockBackend locker : List.of(a, a, b)) {
                Lease lease = locker.tryAcquire(Backends.request(key, TTL)).orElseThrow();
                values.add(probe.get(0, "distlock:" + key));
                assertThat(locker.release(lease)).isTrue();
            }
        }
        int locker = HandOffCourtesy.LOCKER_ID_LENGTH;
        assertThat(values.get(1)).startsWith(values.get(0).substring(0, locker)).isNotEqualTo(values.get(0));
        assertThat(values.get(1).substring(locker, ReleaseMessages.RELEASE_ID_LENGTH))
                .isNotEqualTo(values.get(0).substring(locker, ReleaseMessages.RELEASE_ID_LENGTH));
        assertThat(values.get(2).substring(0, locker))
                .isNotEqualTo(values.get(0).substring(0, locker));
        assertThat(values)
                .allMatch(v -> v.substring(0, ReleaseMessages.RELEASE_ID_LENGTH).matches("[0-9a-f]+"));
    }

    /**
     * Locker a has two threads on the key, locker b one; the key goes round, each holder releasing without asking
     * again. When a's holder releases, its release wakes a's other thread and b's waiter at the same instant; b has
     * released the key lately, so a's own waiter is woken only after the courtesy, and b's waiter has it first, in
     * every one of the rounds. Without the courtesy on the releaser's own waiters the two woken waiters race, and a
     * keeps the key about half of the time.
     */
    @Test
    void release_ofAKeyOtherLockersTakeToo_wakesTheReleasersOwnWaiterAfterTheCourtesy() throws Exception {
        String key = RedisProbe.uniqueKey("sibling-courtesy");
        String elsewhere = RedisProbe.uniqueKey("keeps-b-subscribed");
        // Longer than b's woken waiter needs under load (with 300 ms, b's waiter lost to a's sibling once under load
        // 15).
        Duration courtesy = TestTimeouts.scaled(Duration.ofSeconds(1));
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend a = openWokenByMessagesOnly(courtesy);
                LockBackend b = openWokenByMessagesOnly(courtesy)) {
            // b waits on another key throughout, so that it is subscribed to the release messages from the start.
            Lease aElsewhere = a.tryAcquire(Backends.request(elsewhere, TTL)).orElseThrow();
            CompletableFuture<Optional<Lease>> bElsewhere = acquire(b, elsewhere);
            awaitSubscribers(probe, 1);
            Lease held = b.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            for (int round = 0; round < 4; round++) {
                long sets = probe.calls("set");
                CompletableFuture<Optional<Lease>> a1 = acquire(a, key);
                CompletableFuture<Optional<Lease>> a2 = acquire(a, key);
                awaitSets(probe, sets + 2);
                awaitSubscribers(probe, 2);
                assertThat(b.release(held)).isTrue(); // heard by a: another locker releases this key
                CompletableFuture.anyOf(a1, a2).get(TTL.toMillis(), TimeUnit.MILLISECONDS);
                CompletableFuture<Optional<Lease>> winner = a1.isDone() ? a1 : a2;
                CompletableFuture<Optional<Lease>> sibling = winner == a1 ? a2 : a1;
                // b's own next acquisition, started within the courtesy of b's release, would first pause for it
                // (the releaser's courtesy): start it once that has passed, so that only a's pause is measured.
                Thread.sleep(courtesy.toMillis() + 50);
                sets = probe.calls("set");
                CompletableFuture<Optional<Lease>> bWaits = acquire(b, key);
                awaitSets(probe, sets + 1);
                assertThat(a.release(winner.join().orElseThrow())).isTrue();
                held = bWaits.get(TTL.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
                assertThat(sibling)
                        .as("round %d: a's own waiter took the key its sibling released, ahead of b's waiter", round)
                        .isNotDone();
                sibling.cancel(false);
            }
            assertThat(b.release(held)).isTrue();
            assertThat(a.release(aElsewhere)).isTrue();
            assertThat(b.release(bElsewhere
                            .get(TTL.toMillis(), TimeUnit.MILLISECONDS)
                            .orElseThrow()))
                    .isTrue();
        }
    }

    /**
     * Every waiter of the key in one locker, and no other locker releasing it: a release hands the key to the next
     * thread at once, however long the courtesy (a pause would only leave the key free).
     */
    @Test
    void release_ofAKeyOnlyThisLockerTakes_wakesItsOwnWaiterAtOnce() throws Exception {
        String key = RedisProbe.uniqueKey("own-waiters");
        Duration longCourtesy = TestTimeouts.scaled(Duration.ofSeconds(20));
        try (RedisProbe probe = new RedisProbe(REDIS.endpoints());
                LockBackend backend = openWokenByMessagesOnly(longCourtesy)) {
            Lease held = backend.tryAcquire(Backends.request(key, TTL)).orElseThrow();
            long sets = probe.calls("set");
            List<CompletableFuture<Optional<Lease>>> waiting = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                waiting.add(acquire(backend, key));
            }
            awaitSets(probe, sets + 3);
            awaitSubscribers(probe, 1); // so that it hears its own releases, the first one (not waited for) too
            while (!waiting.isEmpty()) {
                assertThat(backend.release(held)).isTrue();
                CompletableFuture.anyOf(waiting.toArray(CompletableFuture[]::new))
                        .get(longCourtesy.toMillis() / 2, TimeUnit.MILLISECONDS);
                CompletableFuture<Optional<Lease>> next = waiting.stream()
                        .filter(CompletableFuture::isDone)
                        .findFirst()
                        .orElseThrow();
                waiting.remove(next);
                held = next.join().orElseThrow();
            }
            assertThat(backend.release(held)).isTrue();
        }
    }

    /**
     * {@code from} takes the key at once; {@code to}, the only other locker, waits for it, listening, and has it once
     * {@code from} released it: a grant that waited, whose release owes the courtesy.
     */
    private static Lease takenAfterWaiting(RedisProbe probe, LockBackend from, LockBackend to, String key)
            throws Exception {
        Lease held = from.tryAcquire(Backends.request(key, TTL)).orElseThrow();
        return waitsThenReleased(probe, to, key, 1, from, held)
                .get(TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                .orElseThrow();
    }

    /**
     * Starts {@code waiter}'s acquisition of the key, waits until it found the key held and {@code listening} lockers
     * listen to release messages, then has {@code holder} release {@code held}; the acquisition.
     */
    private static CompletableFuture<Optional<Lease>> waitsThenReleased(
            RedisProbe probe, LockBackend waiter, String key, long listening, LockBackend holder, Lease held) {
        long sets = probe.calls("set");
        CompletableFuture<Optional<Lease>> waits = acquire(waiter, key);
        awaitSets(probe, sets + 1);
        awaitSubscribers(probe, listening);
        assertThat(holder.release(held)).isTrue();
        return waits;
    }

    private static void awaitSets(RedisProbe probe, long sets) {
        Deadlines.await(
                () -> probe.calls("set") >= sets,
                Duration.ofSeconds(10),
                () -> "expected " + sets + " SET calls, saw " + probe.calls("set"));
    }

    private static void awaitSubscribers(RedisProbe probe, long lockers) {
        Deadlines.await(
                () -> probe.subscribers(0, CHANNEL) >= lockers,
                Duration.ofSeconds(10),
                () -> lockers + " locker(s) subscribed to " + CHANNEL + " expected");
    }

    /** A locker whose grants never found the key held asks again at once after its release: no courtesy to pay. */
    @Test
    void release_ofAnUncontendedKey_thenAskingAgain_isGrantedWithoutTheCourtesy() throws Exception {
        String key = RedisProbe.uniqueKey("no-courtesy");
        Duration longCourtesy = TestTimeouts.scaled(Duration.ofSeconds(20));
        try (LockBackend backend = open(longCourtesy)) {
            for (int i = 0; i < 3; i++) {
                CompletableFuture<Optional<Lease>> acquisition = acquire(backend, key);
                Lease lease = acquisition
                        .get(longCourtesy.toMillis() / 2, TimeUnit.MILLISECONDS)
                        .orElseThrow();
                assertThat(backend.release(lease)).isTrue();
            }
        }
    }

    @Test
    void courtesy_defaultsByNumberOfMasters_andZeroTurnsItOff() {
        assertThat(settings(Map.of()).courtesyOn(1)).isEqualTo(Duration.ofMillis(2));
        assertThat(settings(Map.of()).courtesyOn(5)).isEqualTo(Duration.ofMillis(12));
        assertThat(settings(Map.of("retryDelay", "40ms")).courtesyOn(3)).isEqualTo(Duration.ofMillis(42));
        assertThat(settings(Map.of("courtesy", "7ms")).courtesyOn(5)).isEqualTo(Duration.ofMillis(7));
        assertThat(settings(Map.of("courtesy", "0")).courtesyOn(1)).isZero();
        assertThat(settings(Map.of("courtesy", "0ms")).courtesyOn(5)).isZero();
    }

    private static RedlockSettings settings(Map<String, String> options) {
        return RedlockSettings.read(new BackendConfig(
                URI.create("redis://127.0.0.1:7001"),
                options,
                Duration.ofSeconds(30),
                Duration.ofSeconds(5),
                Ticker.system(),
                Clock.systemUTC()));
    }
}
