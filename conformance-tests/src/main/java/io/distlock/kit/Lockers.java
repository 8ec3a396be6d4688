package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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
