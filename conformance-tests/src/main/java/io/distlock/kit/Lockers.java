package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.LockBackendException;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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

    /** Whether {@code locker} can take {@code key} at once; a lock so taken is released before returning. */
    static boolean isFree(RemoteLocker locker, String key) {
        return locker.tryLock(key)
                .map(lock -> {
                    lock.close();
                    return true;
                })
                .orElse(false);
    }

    /**
     * {@code locker.lock(key, wait)}, failing with a message that names the bug: {@code timedOut} if the whole wait
     * passed, or a breach of the SPI if the backend gave up before it ({@link io.distlock.spi.LockBackend#acquire}
     * must not return empty before its deadline).
     */
    static RemoteLock lock(RemoteLocker locker, String key, Duration wait, Supplier<String> timedOut)
            throws InterruptedException {
        long start = System.nanoTime();
        try {
            return locker.lock(key, wait);
        } catch (LockTimeoutException e) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            if (waited.compareTo(wait) < 0) {
                throw new AssertionError(
                        gaveUpEarly(waited, wait) + " (lock '" + key + "' reported " + e.getMessage() + ")", e);
            }
            throw new AssertionError(timedOut.get() + " (waited " + waited.toMillis() + " ms for '" + key + "')", e);
        }
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
            // Right after a fault the locker may still be reconnecting: a store error is "not yet", not the answer.
            AtomicReference<LockBackendException> storeError = new AtomicReference<>();
            boolean free = Deadlines.within(bound, () -> {
                try {
                    storeError.set(null);
                    return isFree(locker, key);
                } catch (LockBackendException e) {
                    storeError.set(e);
                    return false;
                }
            });
            if (!free) {
                LockBackendException last = storeError.get();
                throw new AssertionError(
                        "'" + key + "' is still "
                                + (last == null ? "taken" : "not to be had (the store failed: " + last + ")") + " "
                                + bound.toMillis() + " ms on",
                        last);
            }
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
