package io.distlock.kit;

import java.time.Duration;
import java.util.Optional;

/**
 * Faults the kit injects into the store itself (not into the lock holders), given by a backend's test through {@link
 * LockerFixture#storeFaults()}. The test fixtures in {@code test-fixtures} provide what each method needs for the four
 * stores; every fault is undone by the fixture after each test, and {@link #startStore()} undoes {@link #stopStore()}
 * within a test.
 */
public interface StoreFaults {

    /**
     * Stops every node of the store (connections are refused) and blocks until they are down. Lockers opened before
     * keep their clients; nothing is restarted until {@link #startStore()} or the fixture's reset after the test.
     */
    void stopStore();

    /** Starts every node stopped by {@link #stopStore()} again, with its data, and blocks until the store serves. */
    void startStore();

    /**
     * Deletes the lock entry that holds {@code key} as an operator would with the store's own tool ({@code DEL}, {@code
     * etcdctl del}, a CQL {@code DELETE}, a ZooKeeper {@code delete}), behind the holder's back.
     */
    void deleteLockEntry(String key);

    /**
     * How soon after {@link #deleteLockEntry} the holder is told (its {@code isHeld()} false, {@code onLost} fired):
     * the bound this backend promises, before the kit's scaling. A watch on the owned entry gives tens of
     * milliseconds; a backend that notices only when it renews gives a third of the lease plus a request.
     */
    Duration deletionNoticedWithin();

    /**
     * Faults of single nodes, for a store of several: kill, pause, restore. Empty (the default) for a single-node store
     * or a fixture that cannot fault one node; the tests that need them are skipped with this hook named.
     */
    default Optional<NodeFaults> nodeFaults() {
        return Optional.empty();
    }

    /**
     * A partition between lockers and the store through the fixtures' TCP proxies. Empty (the default) when the
     * fixture offers no proxied locker; the tests that need it are skipped with this hook named.
     */
    default Optional<ClientPartition> clientPartition() {
        return Optional.empty();
    }
}
