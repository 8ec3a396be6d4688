package io.distlock;

/** How a backend keeps a held lock alive. */
public enum LeaseModel {
    /**
     * The lock carries a time-to-live in the store; the locker renews it every third of the lease time. If the
     * holder stops renewing (it crashed, froze, or lost the store), the store frees the lock when the time runs out.
     */
    RENEWED_TTL,
    /**
     * The lock lives as long as the client's session with the store (a ZooKeeper session, an etcd lease kept alive by
     * the client). The store frees it when the session expires; the backend tells the locker when that happens.
     */
    SESSION
}
