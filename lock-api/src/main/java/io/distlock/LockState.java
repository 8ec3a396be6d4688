package io.distlock;

import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * What the store holds for one key, read from the store itself ({@link RemoteLocker#inspect(String)}, {@link
 * RemoteLocker#listHeld()}): every holder of the key's lock, read-write lock and semaphore, and how many wait.
 *
 * @param key the key, as the application names it
 * @param holders the holders, in the order the store granted them where it keeps one; empty when the key is free
 * @param waiting how many acquisitions wait in the key's queue, where the store keeps one (ZooKeeper, etcd {@code
 *     fair}, Cassandra {@code queue}, {@code memory:}); empty where waiters poll and the store knows none of them
 */
public record LockState(String key, List<LockHolder> holders, OptionalInt waiting) {

    /** Checks that every part is given; the holders are copied. */
    public LockState {
        Objects.requireNonNull(key, "key");
        holders = List.copyOf(holders);
        Objects.requireNonNull(waiting, "waiting");
    }

    /** Whether anything holds the key. */
    public boolean held() {
        return !holders.isEmpty();
    }
}
