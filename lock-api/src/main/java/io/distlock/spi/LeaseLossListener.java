package io.distlock.spi;

/** Told by a backend that a granted lease is gone without the locker asking (e.g. a ZooKeeper session was lost). */
@FunctionalInterface
public interface LeaseLossListener {

    /**
     * The lease is gone or can no longer be trusted. Must not block.
     *
     * @param reason a short text for logs, e.g. {@code "ZooKeeper session lost"}
     */
    void leaseLost(String reason);

    /**
     * The backend's own keep-alive of the lease is failing ({@code true}: a session's client lost its connection, a
     * lease's keep-alive went unanswered) or works again ({@code false}), for {@link io.distlock.LeaseModel#SESSION}
     * backends, whose leases the locker does not renew: while failing, the locker tells the lock's {@link
     * io.distlock.RemoteLock#onAtRisk} listeners once the validity left falls below its threshold. Must not block; may be
     * called from any thread, repeatedly with the same value. The default does nothing.
     */
    default void keepAliveFailing(boolean failing) {}

    /**
     * Somebody asked this lease's holder to let go ({@link io.distlock.RemoteLocker#requestRelease}), for backends that
     * declare {@link io.distlock.Capabilities.Operation#REQUEST_RELEASE}: the locker runs the lock's {@link
     * io.distlock.RemoteLock#onReleaseRequested} listeners. Call it once for each request that reaches the lease (a
     * request the backend reads again, say at each renewal, is reported once). Must not block; may be called from any
     * thread. The default does nothing.
     */
    default void releaseRequested() {}
}
