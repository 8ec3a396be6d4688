package io.distlock;

import io.distlock.toolkit.OwnerIds;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One holder of a key, as the store keeps it: read back by {@link RemoteLocker#inspect(String)}, not from any locker's
 * own view, so it answers for every process.
 *
 * @param kind what it holds: the lock, one side of a read-write lock, or a permit
 * @param ownerLabel the holder's locker's owner label ({@link RemoteLockerBuilder#ownerLabel(String)}); the stored value
 *     itself when another tool wrote the entry (an {@code etcdctl lock} holder, say)
 * @param ownerId the owner id of the acquisition, as stored
 * @param since when the store created the holder's entry, where it keeps that time: the grant, for a holder that
 *     did not wait; for one that first waited in the store's queue (a ZooKeeper node), its arrival in the queue, since
 *     no store keeps the moment a queued entry became the holder. Empty where the store keeps no such time
 * @param leaseEnds when the store will drop the entry unless it is renewed, where the entry has a time to live of its
 *     own (empty on the session stores, whose entries end with their client's session)
 * @param fencingToken the grant's fencing token, where the backend gives one ({@link Capabilities#fencing()})
 */
public record LockHolder(
        LockKind kind,
        String ownerLabel,
        String ownerId,
        Optional<Instant> since,
        Optional<Instant> leaseEnds,
        OptionalLong fencingToken) {

    /** Checks that every part is given. */
    public LockHolder {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(ownerLabel, "ownerLabel");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(since, "since");
        Objects.requireNonNull(leaseEnds, "leaseEnds");
        Objects.requireNonNull(fencingToken, "fencingToken");
    }

    /**
     * A holder whose label is read from its stored owner id ({@link OwnerIds#label(String)}), or is the stored value
     * itself when another tool wrote it.
     */
    public static LockHolder of(
            LockKind kind,
            String ownerId,
            Optional<Instant> since,
            Optional<Instant> leaseEnds,
            OptionalLong fencingToken) {
        return new LockHolder(kind, OwnerIds.label(ownerId).orElse(ownerId), ownerId, since, leaseEnds, fencingToken);
    }
}
