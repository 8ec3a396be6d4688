package io.distlock.testing;

/** Where a fixture's servers come from, in the order a fixture looks for them. */
public enum ServerSource {
    /** Addresses given by an environment variable: servers the fixture does not run and cannot fault. */
    ENVIRONMENT,
    /** A server binary found on this machine, run by the fixture as a child process: every fault is available. */
    LOCAL_BINARY,
    /** A Testcontainers container (only when there is no local binary and a Docker engine answers). */
    CONTAINER,
    /** A server inside the test JVM (ZooKeeper via Curator's testing servers). */
    IN_PROCESS
}
