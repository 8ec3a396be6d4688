package io.distlock;

import java.util.Objects;

/**
 * What a backend guarantees beyond mutual exclusion. Declared by the backend, not discovered by failure; the
 * conformance kit runs the tests that match and reports the others as skipped with the reason.
 *
 * @param fencing {@link RemoteLock#fencingToken()} is present and strictly increasing per key in acquisition order
 * @param fair waiters on one key are served in arrival order (FIFO), so none is overtaken by a later arrival
 * @param pushWakeUp waiters are woken by the store when the lock is freed, instead of polling it
 * @param leaseModel how a held lock is kept alive
 */
public record Capabilities(boolean fencing, boolean fair, boolean pushWakeUp, LeaseModel leaseModel) {

    /** Checks that the lease model is given. */
    public Capabilities {
        Objects.requireNonNull(leaseModel, "leaseModel");
    }
}
