package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/** Several lockers on the store under test, opened together and closed together. */
final class Lockers implements AutoCloseable {

    private final List<RemoteLocker> lockers = new ArrayList<>();

    private Lockers() {}

    /** Opens {@code count} lockers with {@code leaseTime}. */
    static Lockers open(LockerFixture fixture, int count, Duration leaseTime) {
        Lockers opened = new Lockers();
        try {
            for (int i = 0; i < count; i++) {
                opened.lockers.add(fixture.openLocker(leaseTime));
            }
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        return opened;
    }

    /** The capabilities the backend under test declares. */
    static Capabilities capabilities(LockerFixture fixture) {
        try (RemoteLocker locker = fixture.openLocker(fixture.leaseTime())) {
            return locker.capabilities();
        }
    }

    /**
     * How long the store may take to free what a crashed or frozen holder held: the lease time of the fault tests
     * ({@link LockerFixture#shortLeaseTime()}) for a {@link LeaseModel#RENEWED_TTL} backend, the session timeout
     * ({@link LockerFixture#sessionTimeout()}) for a {@link LeaseModel#SESSION} one, plus the store's expiry slack.
     */
    static Duration freedWithin(LockerFixture fixture, LeaseModel model) {
        return (model == LeaseModel.SESSION ? fixture.sessionTimeout() : fixture.shortLeaseTime())
                .plus(fixture.expirySlack());
    }

    /**
     * How long a holder that can no longer reach the store may go on before it is told: its lease or session as in
     * {@link #freedWithin}, plus the connect timeout of the fault tests.
     */
    static Duration lostWithin(LockerFixture fixture, LeaseModel model) {
        return freedWithin(fixture, model).plus(TestTimeouts.scaled(StoreFaultContract.CONNECT_TIMEOUT));
    }

    /**
     * Whether a holder cut off from the store was told of its loss ({@code toldAt}) strictly before another was
     * granted what it held ({@code grantedAt}), both read from {@link System#nanoTime()} in the listener or right
     * after the grant.
     */
    static boolean toldBefore(long toldAt, long grantedAt) {
        return toldAt - grantedAt < 0;
    }

    /** {@code "n ms before"} or {@code "n ms after"}: when a holder was told, against the next grant. */
    static String toldAgainst(long toldAt, long grantedAt) {
        return Math.abs(toldAt - grantedAt) / 1_000_000 + " ms " + (toldBefore(toldAt, grantedAt) ? "before" : "after");
    }

    /** Whether {@code locker} can take {@code key} at once; a lock so taken is released before returning. */
    static boolean isFree(RemoteLocker locker, String key) {
        return isFree(List.of(locker), LockKind.Space.LOCK, key, 1);
    }

    /**
     * Whether nobody holds anything in {@code space} of {@code key}: {@code lockers} can take at once the lock, the
     * write side of the read-write lock, or all {@code permits} of the semaphore (unused for the other spaces), one
     * permit through each locker (a thread takes one permit at a time through a locker). What is so taken is released
     * before returning.
     *
     * @throws IllegalArgumentException if there are fewer lockers than permits to take
     */
    static boolean isFree(List<RemoteLocker> lockers, LockKind.Space space, String key, int permits) {
        int wanted = space == LockKind.Space.SEMAPHORE ? permits : 1;
        if (lockers.size() < wanted) {
            throw new IllegalArgumentException(
                    "all " + permits + " permits of '" + key + "' are taken through as many lockers, got " + lockers);
        }
        List<RemoteLock> taken = new ArrayList<>();
        try {
            for (RemoteLocker locker : lockers.subList(0, wanted)) {
                Optional<RemoteLock> next =
                        switch (space) {
                            case LOCK -> locker.tryLock(key);
                            case READ_WRITE ->
                                locker.readWriteLock(key).writeLock().tryLock();
                            case SEMAPHORE -> locker.semaphore(key, permits).tryLock();
                        };
                if (next.isEmpty()) {
                    return false;
                }
                taken.add(next.get());
            }
            return true;
        } finally {
            taken.forEach(RemoteLock::close);
        }
    }

    /**
     * {@code locker.lock(key, wait)}, failing with a message that names the bug: {@code timedOut} if the whole wait
     * passed, or a breach of the SPI if the backend gave up before it ({@link io.distlock.spi.LockBackend#acquire}
     * must not return empty before its deadline).
     */
    static RemoteLock lock(RemoteLocker locker, String key, Duration wait, Supplier<String> timedOut)
            throws InterruptedException {
        return lock(locker, LockKind.LOCK, key, 1, wait, timedOut);
    }

    /**
     * {@link #lock(RemoteLocker, String, Duration, Supplier)} of a grant of {@code kind} on {@code key}: the lock, a
     * side of its read-write lock, or a permit of its semaphore of {@code permits} (unused for the other kinds).
     */
    static RemoteLock lock(
            RemoteLocker locker, LockKind kind, String key, int permits, Duration wait, Supplier<String> timedOut)
            throws InterruptedException {
        long start = System.nanoTime();
        try {
            return grant(locker, kind, key, permits, wait);
        } catch (LockTimeoutException e) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            if (waited.compareTo(wait) < 0) {
                throw new AssertionError(
                        gaveUpEarly(waited, wait) + " (lock '" + key + "' reported " + e.getMessage() + ")", e);
            }
            throw new AssertionError(timedOut.get() + " (waited " + waited.toMillis() + " ms for '" + key + "')", e);
        }
    }

    /**
     * Waits up to {@code wait} for a grant of {@code kind} on {@code key}: the lock, a side of its read-write lock, or
     * a permit of its semaphore of {@code permits} (unused for the other kinds).
     */
    static RemoteLock grant(RemoteLocker locker, LockKind kind, String key, int permits, Duration wait)
            throws InterruptedException {
        return switch (kind) {
            case LOCK -> locker.lock(key, wait);
            case READ -> locker.readWriteLock(key).readLock().lock(wait);
            case WRITE -> locker.readWriteLock(key).writeLock().lock(wait);
            case PERMIT -> locker.semaphore(key, permits).lock(wait);
        };
    }

    /** The message for a blocking acquire that returned empty after {@code waited} of a {@code wait} deadline. */
    static String gaveUpEarly(Duration waited, Duration wait) {
        return "the backend breaks the SPI contract: its blocking acquire returned empty after " + waited.toMillis()
                + " ms of a " + wait.toMillis() + " ms deadline, but LockBackend.acquire must not return empty before"
                + " its deadline has passed (a backend defect, not a slow store)";
    }

    /**
     * Asserts that the store holds nothing for {@code keys} within {@code bound} (leases of dead or cut-off lockers may
     * still have to run out), where the fixture can list entries ({@link LockerFixture#storeEntries}); and that each
     * key is free, a {@link LockBackendException} of a locker still reconnecting counting as not yet.
     */
    static void assertNothingLeft(LockerFixture fixture, RemoteLocker locker, Duration bound, String... keys)
            throws InterruptedException {
        for (String key : keys) {
            boolean empty = Deadlines.within(
                    bound, () -> fixture.storeEntries(key).map(List::isEmpty).orElse(true));
            if (!empty) {
                throw new AssertionError("the store still holds entries for '" + key + "' " + bound.toMillis()
                        + " ms on: " + fixture.storeEntries(key).orElseThrow());
            }
            assertFree(List.of(locker), bound, LockKind.Space.LOCK, key, 1);
        }
    }

    /**
     * Asserts that nothing is held on {@code key} within {@code bound} in the spaces of {@code kinds} other than the
     * lock's (see {@link #assertNothingLeft} for that): {@code lockers} can take the read-write lock's write side, and
     * all {@code permits} of its semaphore, one through each locker.
     */
    static void assertOtherSpacesFree(
            List<RemoteLocker> lockers, Duration bound, Collection<LockKind> kinds, String key, int permits)
            throws InterruptedException {
        for (LockKind.Space space : EnumSet.of(LockKind.Space.READ_WRITE, LockKind.Space.SEMAPHORE)) {
            if (kinds.stream().anyMatch(k -> k.space() == space)) {
                assertFree(lockers, bound, space, key, permits);
            }
        }
    }

    private static void assertFree(
            List<RemoteLocker> lockers, Duration bound, LockKind.Space space, String key, int permits)
            throws InterruptedException {
        // Right after a fault the locker may still be reconnecting: a store error is "not yet", not the answer.
        AtomicReference<LockBackendException> storeError = new AtomicReference<>();
        boolean free = Deadlines.within(bound, () -> {
            try {
                storeError.set(null);
                return isFree(lockers, space, key, permits);
            } catch (LockBackendException e) {
                storeError.set(e);
                return false;
            }
        });
        if (!free) {
            LockBackendException last = storeError.get();
            String what =
                    switch (space) {
                        case LOCK -> "'" + key + "'";
                        case READ_WRITE -> "the read-write lock of '" + key + "'";
                        case SEMAPHORE -> "the semaphore of '" + key + "' (" + permits + " permits)";
                    };
            throw new AssertionError(
                    what + " is still "
                            + (last == null ? "taken" : "not to be had (the store failed: " + last + ")") + " "
                            + bound.toMillis() + " ms on",
                    last);
        }
    }

    /** The locker number {@code index}, modulo the number opened: threads share lockers round-robin. */
    RemoteLocker get(int index) {
        return lockers.get(index % lockers.size());
    }

    int size() {
        return lockers.size();
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (RemoteLocker locker : lockers) {
            try {
                locker.close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        lockers.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
