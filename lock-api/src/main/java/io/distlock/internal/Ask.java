package io.distlock.internal;

import io.distlock.LockKind;
import io.distlock.toolkit.OwnerIds;
import java.time.Duration;
import java.util.Optional;

/**
 * What one call asks for: a {@link LockKind} of grant on a key (with its limit), asked for the {@link RequestKind}
 * way, with the lease to ask the store for. Each try at it
 * (after a stale grant a wait tries again) is a fresh {@link PendingGrant}, with its own owner id. Built by the locker's
 * methods, carried through the acquisition paths.
 *
 * @param kind how to ask the backend
 * @param lockKind what is asked for
 * @param limit the request's limit (see {@link io.distlock.spi.LockRequest#limit()})
 * @param key the key, already checked
 * @param leaseTime the lease to ask for and to renew by
 * @param fixed whether the lock is held for {@code leaseTime} only, never renewed
 * @param ownerLabel the owner label stored with the grant's entry, if not the locker's (an election's candidate stores
 *     its identity)
 */
record Ask(
        RequestKind kind,
        LockKind lockKind,
        int limit,
        String key,
        Duration leaseTime,
        boolean fixed,
        Optional<String> ownerLabel) {

    /**
     * An exclusive lock on {@code key}: held for {@code fixedLease} if given, else renewed by {@code lockerLease} for
     * as long as it is held.
     */
    static Ask exclusive(String key, Optional<Duration> fixedLease, Duration lockerLease) {
        return of(LockKind.LOCK, 1, key, fixedLease, lockerLease);
    }

    /**
     * A grant of {@code lockKind} with {@code limit} on {@code key}: held for {@code fixedLease} if given, else renewed
     * by {@code lockerLease} for as long as it is held.
     */
    static Ask of(LockKind lockKind, int limit, String key, Optional<Duration> fixedLease, Duration lockerLease) {
        return new Ask(
                RequestKind.STORE,
                lockKind,
                limit,
                key,
                fixedLease.orElse(lockerLease),
                fixedLease.isPresent(),
                Optional.empty());
    }

    /** This ask with {@code label}, already checked, stored as its owner label instead of the locker's. */
    Ask labelled(String label) {
        return new Ask(kind, lockKind, limit, key, leaseTime, fixed, Optional.of(label));
    }

    /**
     * The next try: a request with a fresh owner id carrying this ask's own owner label, else {@code lockerLabel}.
     */
    PendingGrant next(String lockerLabel) {
        return new PendingGrant(key, OwnerIds.next(ownerLabel.orElse(lockerLabel)), leaseTime, fixed, lockKind, limit);
    }
}
