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
}
