package io.distlock;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a backend guarantees beyond mutual exclusion. Declared by the backend, not discovered by failure; the
 * conformance kit runs the tests that match and reports the others as skipped with the reason.
 *
 * @param fencing {@link RemoteLock#fencingToken()} is present and strictly increasing per key in acquisition order
 * @param fair waiters on one key are served in arrival order (FIFO), so none is overtaken by a later arrival
 * @param pushWakeUp waiters are woken by the store when the lock is freed, instead of polling it
 * @param leaseModel how a held lock is kept alive
 * @param kinds the kinds of grant the backend offers: always {@link LockKind#LOCK}; {@link LockKind#READ} and {@link
 *     LockKind#WRITE} together for read-write locks, {@link LockKind#PERMIT} for semaphores
 * @param operations what an operator can do beyond taking and releasing grants: read who holds a key, break a held key,
 *     ask its holders to let go, keep a key taken for a lock-delay after an unclean end; and whether a session backend
 *     reports its keep-alive failing, for the early warning
 */
public record Capabilities(
        boolean fencing,
        boolean fair,
        boolean pushWakeUp,
        LeaseModel leaseModel,
        Set<LockKind> kinds,
        Set<Operation> operations) {

    /** What an operator can do with a backend's keys beyond taking and releasing grants. */
    public enum Operation {
        /** {@link RemoteLocker#inspect(String)} and {@link RemoteLocker#listHeld()}: who holds a key, read from the store. */
        INSPECT,
        /** {@link RemoteLocker#breakLock(String)}: delete a key's holders' entries, as an administrator would. */
        BREAK,
        /**
         * {@link RemoteLock#onAtRisk}, for a {@link LeaseModel#SESSION} backend: it tells the locker when its session's
         * keep-alive fails ({@link io.distlock.spi.LeaseLossListener#keepAliveFailing}). A {@link
         * LeaseModel#RENEWED_TTL} backend needs not declare it: the locker sees its own renewals fail.
         */
        WARN,
        /**
         * {@link RemoteLockerBuilder#lockDelay}: a key whose grant ended without a release (its holder crashed, froze or
         * was cut off, and its lease ran out) is granted to nobody for the lock-delay longer, while a released or broken
         * key is free at once.
         */
        LOCK_DELAY,
        /**
         * {@link RemoteLocker#requestRelease(String)}: any process asks a key's holders to let go, and each holder's
         * {@link RemoteLock#onReleaseRequested} listeners run within the bound the backend documents.
         */
        REQUEST_RELEASE
    }

    /** Checks that the lease model is given, and that the kinds hold the lock and both sides of a read-write lock. */
    public Capabilities {
        Objects.requireNonNull(leaseModel, "leaseModel");
        Objects.requireNonNull(kinds, "kinds");
        Objects.requireNonNull(operations, "operations");
        if (!kinds.contains(LockKind.LOCK)) {
            throw new IllegalArgumentException("Every backend offers LOCK: " + kinds);
        }
        if (kinds.contains(LockKind.READ) != kinds.contains(LockKind.WRITE)) {
            throw new IllegalArgumentException("READ and WRITE come together (a read-write lock): " + kinds);
        }
        kinds = Collections.unmodifiableSet(EnumSet.copyOf(kinds));
        operations = operations.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(operations));
    }

    /** The capabilities of a backend that offers {@code kinds} and no {@linkplain Operation operation}. */
    public Capabilities(boolean fencing, boolean fair, boolean pushWakeUp, LeaseModel leaseModel, Set<LockKind> kinds) {
        this(fencing, fair, pushWakeUp, leaseModel, kinds, Set.of());
    }

    /** The capabilities of a backend that offers the exclusive lock only. */
    public Capabilities(boolean fencing, boolean fair, boolean pushWakeUp, LeaseModel leaseModel) {
        this(fencing, fair, pushWakeUp, leaseModel, EnumSet.of(LockKind.LOCK));
    }

    /** These capabilities, offering {@code more} kinds as well. */
    public Capabilities with(LockKind... more) {
        EnumSet<LockKind> all = EnumSet.copyOf(kinds);
        all.addAll(java.util.List.of(more));
        return new Capabilities(fencing, fair, pushWakeUp, leaseModel, all, operations);
    }

    /** These capabilities, offering {@code more} operations as well. */
    public Capabilities with(Operation... more) {
        EnumSet<Operation> all = EnumSet.noneOf(Operation.class);
        all.addAll(operations);
        all.addAll(java.util.List.of(more));
        return new Capabilities(fencing, fair, pushWakeUp, leaseModel, kinds, all);
    }

    /** Whether the backend offers {@code operation}. */
    public boolean offers(Operation operation) {
        return operations.contains(operation);
    }

    /** Whether the backend offers {@code kind}. */
    public boolean offers(LockKind kind) {
        return kinds.contains(kind);
    }
}
