package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.OwnerIds;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Attempts that end without the lock (seed 000 Listings 6 and 7 as the SPI states them): a blocking acquire waits out
 * its whole deadline, an interrupted one ends with {@link InterruptedException}, and none of them, nor a failed
 * {@code tryLock} or a release, leaves anything in the store. With {@link #storeEntries} the kit reads the store
 * itself; without it, it checks that the key is free afterwards.
 */
public interface AbandonedAttemptContract extends LockerFixture {

    /**
     * A blocking {@code acquire} through the SPI on a key another owner holds returns empty only once its deadline has
     * passed (the SPI forbids returning empty earlier), and leaves nothing behind.
     */
    @Test
    default void acquire_whileHeld_waitsOutItsDeadline() throws Exception {
        String key = TestKeys.unique("deadline");
        Duration wait = TestTimeouts.scaled(Duration.ofMillis(500));
        try (RemoteLocker holderLocker = openLocker(leaseTime());
                LockBackend raw = openBackend(leaseTime())) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            int baseline = entries(key, "held by one owner").size();
            long start = System.nanoTime();
            Deadline deadline = Deadline.after(wait, Ticker.system());
            Optional<Lease> lease = raw.acquire(new LockRequest(key, OwnerIds.next(), leaseTime(), r -> {}), deadline);
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            lease.ifPresent(raw::release);
            assertFalse(lease.isPresent(), "acquire granted '" + key + "' while another owner held it");
            assertTrue(deadline.hasPassed(), () -> Lockers.gaveUpEarly(waited, wait));
            assertEntries(key, baseline, "after a blocking acquire timed out");
            held.release();
            assertNothingLeft(key, "after the holder released (and a timed-out acquire before)");
        }
    }

    /**
     * While another owner holds the key, a failed {@code tryLock} and a {@code lock} that times out leave no entry
     * in the store; once the holder releases, the store holds nothing for the key.
     */
    @Test
    default void failedAttempts_andRelease_leaveNothingInStore() throws Exception {
        String key = TestKeys.unique("nothing-left");
        Duration wait = TestTimeouts.scaled(Duration.ofMillis(300));
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLock held = lockers.get(0).lock(key, maxWait());
            int baseline = entries(key, "held by one owner").size();
            assertTrue(lockers.get(1).tryLock(key).isEmpty(), "tryLock of '" + key + "' while another owner holds it");
            assertEntries(key, baseline, "after a failed tryLock");
            assertThrows(LockTimeoutException.class, () -> lockers.get(1).lock(key, wait), "lock of a held key");
            assertEntries(key, baseline, "after a timed-out lock");
            held.release();
            assertNothingLeft(key, "after the holder released (and a failed tryLock and a timed-out lock before)");
        }
    }

    /**
     * A waiter interrupted in a blocking {@code acquire} through the SPI ends with {@link InterruptedException}, within
     * {@link #expirySlack()} of the interrupt, and leaves nothing in the store: once the holder releases, the key is
     * free for anyone.
     */
    @Test
    default void acquire_interrupted_throwsInterruptedException_leavesNothing() throws Exception {
        String key = TestKeys.unique("interrupted");
        try (RemoteLocker holderLocker = openLocker(leaseTime());
                LockBackend raw = openBackend(leaseTime())) {
            RemoteLock held = holderLocker.lock(key, maxWait());
            int baseline = entries(key, "held by one owner").size();
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            Optional<Lease> lease = raw.acquire(
                                    new LockRequest(key, OwnerIds.next(), leaseTime(), r -> {}),
                                    Deadline.after(maxWait(), Ticker.system()));
                            lease.ifPresent(raw::release);
                            outcome.set(lease);
                        } catch (Throwable e) {
                            outcome.set(e);
                        }
                    },
                    "kit-interrupted-waiter");
            waiter.setDaemon(true);
            waiter.start();
            // Interrupt it once it waits (parked, or at most a moment later if its client waits in a socket read).
            Deadlines.within(TestTimeouts.scaled(Duration.ofMillis(500)), () -> {
                Thread.State state = waiter.getState();
                return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
            });
            waiter.interrupt();
            waiter.join(expirySlack().toMillis());
            assertFalse(
                    waiter.isAlive(),
                    "acquire went on waiting for " + expirySlack() + " after its thread was interrupted");
            Object result = outcome.get();
            assertTrue(
                    result instanceof InterruptedException,
                    () -> "an interrupted acquire must throw InterruptedException, but it "
                            + (result instanceof Throwable ? "threw " + result : "returned " + result));
            assertEntries(key, baseline, "after an interrupted acquire");
            held.release();
            assertNothingLeft(key, "after the holder released (and an interrupted acquire before)");
        }
    }

    /**
     * A thread whose interrupt flag is already set takes nothing: {@code lock}, {@code lock} with a deadline, {@code
     * lockAll} and {@code withLock} throw {@link InterruptedException} at once, as {@code java.util.concurrent}'s
     * blocking calls do (clearing the flag), on a free key, without running the action; {@code lockAsync} answers a
     * future failed with {@link InterruptedException} instead of throwing. The key stays free.
     */
    @Test
    default void lock_byAnAlreadyInterruptedThread_throwsInterruptedException_andTakesNothing() throws Exception {
        String key = TestKeys.unique("pre-interrupted");
        try (RemoteLocker locker = openLocker(leaseTime())) {
            List<String> calls = List.of("lock(key)", "lock(key, maxWait)", "lockAll", "withLock");
            AtomicBoolean ran = new AtomicBoolean();
            for (String call : calls) {
                Thread.currentThread().interrupt();
                Object outcome;
                try {
                    outcome = switch (call) {
                        case "lock(key)" -> locker.lock(key);
                        case "lock(key, maxWait)" -> locker.lock(key, maxWait());
                        case "lockAll" -> locker.lockAll(List.of(key, key + "-2"), maxWait());
                        default ->
                            locker.withLock(key, maxWait(), () -> {
                                ran.set(true);
                                return "ran";
                            });
                    };
                } catch (InterruptedException expected) {
                    outcome = expected;
                } finally {
                    Thread.interrupted();
                }
                Object result = outcome;
                if (result instanceof AutoCloseable granted) {
                    granted.close();
                }
                assertTrue(
                        result instanceof InterruptedException,
                        () -> call + " by a thread whose interrupt flag was set must throw InterruptedException at"
                                + " once, but it returned " + result);
            }
            assertFalse(ran.get(), "withLock ran its action for an interrupted thread");

            Thread.currentThread().interrupt();
            CompletableFuture<RemoteLock> async;
            try {
                async = locker.lockAsync(key, maxWait());
            } finally {
                Thread.interrupted();
            }
            ExecutionException failed = assertThrows(
                    ExecutionException.class,
                    () -> async.get(maxWait().toMillis(), TimeUnit.MILLISECONDS).close(),
                    "lockAsync by an interrupted thread must answer a failed future");
            assertTrue(
                    failed.getCause() instanceof InterruptedException,
                    () -> "lockAsync by an interrupted thread failed with " + failed.getCause()
                            + ", not InterruptedException");
        }
        assertNothingLeft(key, "after calls by an interrupted thread");
    }

    /**
     * The store's entries for {@code key} through {@link #storeEntries}, once two reads 100 ms apart agree, asserted
     * non-empty (a held key has at least one, or the hook reads the wrong place); an empty list when the fixture has no
     * hook. A backend may grant before all of its holder's writes have landed (Redlock grants at a majority of the
     * masters, the other writes still on their way): read at once, the holder's entries could grow afterwards and be
     * taken for what an abandoned attempt left (3 entries, then 5, all the holder's, in one CI run).
     */
    private List<String> entries(String key, String state) throws InterruptedException {
        Optional<List<String>> entries = storeEntries(key);
        if (entries.isEmpty()) {
            return List.of();
        }
        List<String> settled = entries.get();
        long end =
                System.nanoTime() + TestTimeouts.scaled(Duration.ofSeconds(2)).toNanos();
        while (System.nanoTime() - end < 0) {
            Thread.sleep(100);
            List<String> again = storeEntries(key).orElseThrow();
            if (again.equals(settled)) {
                break;
            }
            settled = again;
        }
        assertFalse(
                settled.isEmpty(),
                "storeEntries('" + key + "') lists nothing for a key " + state + ": does the hook read the place the"
                        + " backend writes?");
        return settled;
    }

    private void assertEntries(String key, int baseline, String when) {
        storeEntries(key)
                .ifPresent(list -> assertEquals(
                        baseline,
                        list.size(),
                        () -> "the store holds " + list.size() + " entries for '" + key + "' " + when + ", "
                                + baseline + " before (the holder's): an abandoned attempt left something behind: "
                                + list));
    }

    private void assertNothingLeft(String key, String when) {
        storeEntries(key)
                .ifPresent(list -> assertTrue(
                        list.isEmpty(), () -> "the store still holds entries for '" + key + "' " + when + ": " + list));
        try (RemoteLocker other = openLocker(leaseTime())) {
            assertTrue(Lockers.isFree(other, key), "'" + key + "' is not free " + when);
        }
        storeEntries(key)
                .ifPresent(list -> assertTrue(
                        list.isEmpty(),
                        () -> "the store still holds entries for '" + key + "' after a tryLock and its release: "
                                + list));
    }
}
