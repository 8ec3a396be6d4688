package io.distlock.kit;

import io.distlock.RemoteLockerBuilder;

/**
 * A network partition between some lockers and the store, given by a backend's test through {@link
 * StoreFaults#clientPartition()}: lockers built with {@link #lockerBuilder()} reach every store node through the
 * fixtures' TCP proxies, and {@link #partition()} makes those proxies swallow all traffic (connections stay open,
 * nothing arrives, as with a pulled cable), while lockers of {@link LockerFixture#lockerBuilder()} still reach the
 * store directly. The fixture heals the partition after each test.
 */
public interface ClientPartition {

    /** A builder, without a lease time, for a locker whose every connection to the store goes through the proxies. */
    RemoteLockerBuilder lockerBuilder();

    /** Cuts the proxied lockers off: their requests and the store's answers are swallowed. */
    void partition();

    /** Lets traffic through the proxies again. */
    void heal();
}
