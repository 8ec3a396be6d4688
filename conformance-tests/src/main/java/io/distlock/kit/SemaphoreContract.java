package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteSemaphore;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Semaphores ({@link RemoteLocker#semaphore}), for backends that declare them: never more than N permits held at once
 * and N really reached; a holder that dies frees its permit with its lease; a mismatched N and N &lt;= 0 refused; and
 * release and fencing as for locks.
 */
public interface SemaphoreContract extends LockerFixture {

    /** N of the semaphores of these tests. */
    int PERMITS = 3;

    /**
     * N is reached, and no more: {@value #PERMITS} lockers each get a permit by {@code tryLock}, one more locker is
     * refused (by {@code tryLock} and a short {@code lock}), and a release lets it in.
     */
    @Test
    @Requires(Need.SEMAPHORES)
    default void semaphore_grantsNPermits_refusesOneMore_andAReleaseLetsItIn() throws Exception {
        String key = TestKeys.unique("sem-n");
        Duration shortWait = TestTimeouts.scaled(Duration.ofMillis(300));
        try (Lockers lockers = Lockers.open(this, PERMITS + 1, leaseTime())) {
            List<RemoteLock> permits = new ArrayList<>();
            try {
                for (int i = 0; i < PERMITS; i++) {
                    int n = i;
                    RemoteLock permit = lockers.get(i)
                            .semaphore(key, PERMITS)
                            .tryLock()
                            .orElseThrow(() -> new AssertionError("permit " + (n + 1) + " of " + PERMITS + " of '" + key
                                    + "' was refused with " + n + " held: N is never reached"));
                    assertEquals(LockKind.PERMIT, permit.kind(), "the kind of a permit");
                    permits.add(permit);
                }
                RemoteSemaphore last = lockers.get(PERMITS).semaphore(key, PERMITS);
                assertEquals(PERMITS, last.permits());
                Optional<RemoteLock> extra = last.tryLock();
                extra.ifPresent(RemoteLock::close);
                assertFalse(extra.isPresent(), "a permit beyond the " + PERMITS + " of '" + key + "' (tryLock)");
                assertThrows(
                        LockTimeoutException.class,
                        () -> last.lock(shortWait).close(),
                        "a permit beyond the " + PERMITS + " of '" + key + "' (lock)");
                assertTrue(
                        Lockers.isFree(lockers.get(PERMITS), key),
                        "the lock on '" + key + "' is another thing than its semaphore");
                assertEquals(ReleaseResult.RELEASED, permits.remove(0).release());
                try (RemoteLock next = last.lock(maxWait())) {
                    assertTrue(next.isHeld());
                }
            } finally {
                permits.forEach(RemoteLock::close);
            }
        }
    }

    /**
     * Never more than N at once, and N reached, under contention: twice N threads over several lockers keep taking
     * permits and hold each a moment; a counter of holders and the recorded history both stay within N, and the
     * counter reached N. Until N holders have been seen at once, a holder waits for the others (up to half of
     * {@link #maxWait()}, which the waiters wait) before it lets go, so that a store whose grants come tens of milliseconds apart (a Paxos round each)
     * still shows N at once; a backend that grants fewer than N at once never does, and fails.
     */
    @Test
    @Requires(Need.SEMAPHORES)
    default void semaphore_neverMoreThanNHolders_manyThreads() throws Exception {
        String key = TestKeys.unique("sem-bound");
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        int threads = 2 * PERMITS;
        try (Lockers lockers = Lockers.open(this, PERMITS, leaseTime());
                HistoryRecorder history = HistoryRecorder.inMemory()) {
            long deadline = System.nanoTime() + maxWait().toNanos() / 2; // waiters wait maxWait()
            Concurrently.run("permits", threads, maxWait().multipliedBy(3), i -> {
                RemoteSemaphore semaphore = lockers.get(i).semaphore(key, PERMITS);
                for (int n = 0; n < acquisitionsPerThread(); n++) {
                    try (RemoteLock permit = semaphore.lock(maxWait())) {
                        history.acquired(permit, PERMITS);
                        most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                        Thread.sleep(1 + ThreadLocalRandom.current().nextInt(4));
                        awaitAllHeldOnce(most, deadline);
                        holding.decrementAndGet();
                        history.releasing(permit);
                    }
                }
            });
            HistoryChecker.assertConsistent(history.events());
            assertTrue(
                    most.get() <= PERMITS,
                    "more holders at once than the " + PERMITS + " permits of '" + key + "': " + most.get());
            assertEquals(
                    PERMITS,
                    most.get(),
                    "the " + threads + " threads never held all " + PERMITS + " permits of '" + key + "' at once");
        }
    }

    /**
     * A holder that dies while holding a permit (its locker goes silent: no renewal, no release reaches the store)
     * frees it with its lease: with every permit taken, a waiter gets one within the lease time plus {@link
     * #expirySlack()}.
     */
    @Test
    @Requires({Need.SEMAPHORES, Need.RENEWED_TTL_LEASES})
    default void permit_ofAHolderThatDies_isFreedWithItsLease_andAWaiterGetsIt() throws Exception {
        String key = TestKeys.unique("sem-dies");
        Duration ttl = shortLeaseTime();
        InterceptingProvider intercepting = new InterceptingProvider(provider());
        try (RemoteLocker dying =
                        lockerBuilder().leaseTime(ttl).provider(intercepting).build();
                Lockers others = Lockers.open(this, 2, leaseTime())) {
            RemoteLock alive = others.get(0).semaphore(key, 2).lock(maxWait());
            try {
                dying.semaphore(key, 2).lock(maxWait());
                assertFalse(
                        others.get(1)
                                .semaphore(key, 2)
                                .tryLock()
                                .map(p -> {
                                    p.close();
                                    return true;
                                })
                                .orElse(false),
                        "a third permit of two of '" + key + "'");
                intercepting.goSilent();
                Duration bound = ttl.plus(expirySlack());
                try (RemoteLock next = others.get(1).semaphore(key, 2).lock(bound)) {
                    assertTrue(next.isHeld());
                } catch (LockTimeoutException e) {
                    throw new AssertionError(
                            "the permit of a holder that died was not returned: no waiter got a permit of '" + key
                                    + "' within " + bound,
                            e);
                }
                assertTrue(alive.isHeld(), "the living holder's permit");
            } finally {
                alive.close();
            }
        }
    }

    /**
     * Every user of a semaphore gives the same N: while it is held with N = 2, asking for it with N = 3 fails with
     * {@link LockConfigurationException} naming both (tryLock, lock, lockAsync), and leaves nothing in the store; once
     * free, any N may take it.
     */
    @Test
    @Requires(Need.SEMAPHORES)
    default void semaphore_askedWithAnotherN_isRefused_andLeavesNothing() throws Exception {
        String key = TestKeys.unique("sem-mismatch");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock held = lockers.get(0).semaphore(key, 2).lock(maxWait());
            try {
                Optional<List<String>> before = storeEntries(key);
                RemoteSemaphore other = lockers.get(1).semaphore(key, 3);
                List<Executable> calls = List.of(
                        () -> other.tryLock().ifPresent(RemoteLock::close),
                        () -> other.lock(maxWait()).close(),
                        () -> joined(other));
                for (Executable call : calls) {
                    LockConfigurationException e = assertThrows(
                            LockConfigurationException.class,
                            call,
                            "a permit of '" + key + "' asked for with 3 permits while held with 2");
                    assertTrue(
                            e.getMessage().contains("2") && e.getMessage().contains("3"),
                            () -> "the refusal should name both numbers of permits: " + e.getMessage());
                }
                assertEquals(before, storeEntries(key), "the store's entries for '" + key + "' after the refusals");
                assertTrue(held.isHeld(), "the holder's permit after the refusals");
            } finally {
                held.close();
            }
            try (RemoteLock three = lockers.get(1).semaphore(key, 3).lock(maxWait())) {
                assertTrue(three.isHeld(), "a free semaphore taken with another N");
            }
        }
    }

    private static void joined(RemoteSemaphore semaphore) throws Throwable {
        try {
            semaphore.lockAsync(Duration.ofSeconds(30)).join().close();
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause();
        }
    }

    /** N &lt;= 0 is refused with {@link IllegalArgumentException} naming it, before anything reaches the store. */
    @Test
    @Requires(Need.SEMAPHORES)
    default void semaphore_withNoPermits_orFewer_isRefused() {
        String key = TestKeys.unique("sem-zero");
        try (RemoteLocker locker = openLocker(leaseTime())) {
            for (int n : new int[] {0, -1, Integer.MIN_VALUE}) {
                IllegalArgumentException e = assertThrows(
                        IllegalArgumentException.class, () -> locker.semaphore(key, n), "a semaphore of " + n);
                assertTrue(e.getMessage().contains(Integer.toString(n)), e.getMessage());
            }
            assertThrows(NullPointerException.class, () -> locker.semaphore(null, 1), "a null key");
            assertThrows(IllegalArgumentException.class, () -> locker.semaphore(" ", 1), "a blank key");
        }
    }

    /**
     * A permit released twice: {@link ReleaseResult#RELEASED}, then {@link ReleaseResult#ALREADY_RELEASED}; with
     * fencing, each permit has a token, growing from grant to grant.
     */
    @Test
    @Requires(Need.SEMAPHORES)
    default void permit_releasedTwice_isAlreadyReleased_andTokensGrow() throws Exception {
        String key = TestKeys.unique("sem-release");
        boolean fencing = Lockers.capabilities(this).fencing();
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            long previous = Long.MIN_VALUE;
            for (int n = 0; n < 6; n++) {
                RemoteLock permit = lockers.get(n).semaphore(key, 1).lock(maxWait());
                OptionalLong token = permit.fencingToken();
                assertEquals(
                        fencing, token.isPresent(), "a permit's token while the backend declares fencing=" + fencing);
                if (fencing) {
                    long before = previous;
                    assertTrue(
                            token.getAsLong() > before,
                            "permit " + n + " got token " + token.getAsLong() + " after " + before);
                    previous = token.getAsLong();
                }
                assertEquals(ReleaseResult.RELEASED, permit.release(), "first release of a permit");
                assertFalse(permit.isHeld(), "isHeld() after release");
                assertEquals(ReleaseResult.ALREADY_RELEASED, permit.release(), "second release of a permit");
            }
        }
    }

    /**
     * Until {@code most} has reached {@value #PERMITS} (or {@code deadline}, a {@link System#nanoTime()} reading, has
     * passed), holds on: the holders of a semaphore whose grants come far apart then overlap, and N is seen at once.
     */
    private static void awaitAllHeldOnce(AtomicInteger most, long deadline) throws InterruptedException {
        while (most.get() < PERMITS && System.nanoTime() - deadline < 0) {
            Thread.sleep(1);
        }
    }
}
