package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockKind;
import java.util.Optional;

/** What a kit test may need from the backend under test or its fixture; see {@link Requires}. */
public enum Need {

    /** Leases that run out unless renewed ({@link LeaseModel#RENEWED_TTL}): the tests that stage a lost lease. */
    RENEWED_TTL_LEASES {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return capabilities.leaseModel() == LeaseModel.RENEWED_TTL
                    ? Optional.empty()
                    : Optional.of("backend declares LeaseModel.SESSION: the lock lives with the client's session, which"
                            + " no unrenewed TTL ends; the multi-process tests kill and freeze the holder's process"
                            + " instead");
        }
    },

    /** Fencing tokens ({@link Capabilities#fencing()}). */
    FENCING {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return capabilities.fencing()
                    ? Optional.empty()
                    : Optional.of("backend declares no fencing (Capabilities.fencing is false)");
        }
    },

    /** Service in arrival order ({@link Capabilities#fair()}). */
    FAIRNESS {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return capabilities.fair()
                    ? Optional.empty()
                    : Optional.of("backend declares no fairness (Capabilities.fair is false)");
        }
    },

    /** Read-write locks ({@link LockKind#READ} and {@link LockKind#WRITE} in {@link Capabilities#kinds()}). */
    READ_WRITE_LOCKS {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            Optional<String> elsewhere = fixture.kindsTestedElsewhere();
            if (elsewhere.isPresent()) {
                return elsewhere;
            }
            return capabilities.offers(LockKind.READ)
                    ? Optional.empty()
                    : Optional.of("backend declares no read-write locks (Capabilities.kinds() " + capabilities.kinds()
                            + " lacks READ and WRITE)");
        }
    },

    /** Semaphores ({@link LockKind#PERMIT} in {@link Capabilities#kinds()}). */
    SEMAPHORES {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            Optional<String> elsewhere = fixture.kindsTestedElsewhere();
            if (elsewhere.isPresent()) {
                return elsewhere;
            }
            return capabilities.offers(LockKind.PERMIT)
                    ? Optional.empty()
                    : Optional.of("backend declares no semaphores (Capabilities.kinds() " + capabilities.kinds()
                            + " lacks PERMIT)");
        }
    },

    /** Looking up who holds a key ({@link Capabilities.Operation#INSPECT}). */
    INSPECTION {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return operation(fixture, capabilities, Capabilities.Operation.INSPECT);
        }
    },

    /**
     * Elections ({@link io.distlock.LeaderElection}): offered on every backend, since they stand on the lock, but
     * their leader is read back through inspection, so they are tested where {@link Capabilities.Operation#INSPECT} is
     * declared, and once per store like inspection ({@link LockerFixture#operationsTestedElsewhere()}).
     */
    ELECTION {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return operation(fixture, capabilities, Capabilities.Operation.INSPECT)
                    .map(why -> "elections are tested where the leader can be read back: " + why);
        }
    },

    /** Breaking a held key ({@link Capabilities.Operation#BREAK}). */
    BREAK {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return operation(fixture, capabilities, Capabilities.Operation.BREAK);
        }
    },

    /**
     * The early warning ({@link io.distlock.RemoteLock#onAtRisk}): a {@link LeaseModel#RENEWED_TTL} backend, whose
     * renewals the locker sees fail, or a session backend that reports its keep-alive ({@link
     * Capabilities.Operation#WARN}).
     */
    AT_RISK_WARNING {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return capabilities.leaseModel() == LeaseModel.RENEWED_TTL
                            || capabilities.offers(Capabilities.Operation.WARN)
                    ? Optional.empty()
                    : Optional.of("a session backend that does not report its keep-alive failing (Capabilities"
                            + ".operations() " + capabilities.operations() + " lacks WARN)");
        }
    },

    /** Keeping a key after an unclean end ({@link Capabilities.Operation#LOCK_DELAY}). */
    LOCK_DELAY {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return operation(fixture, capabilities, Capabilities.Operation.LOCK_DELAY);
        }
    },

    /** Asking a holder to let go ({@link Capabilities.Operation#REQUEST_RELEASE}). */
    RELEASE_REQUESTS {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return operation(fixture, capabilities, Capabilities.Operation.REQUEST_RELEASE);
        }
    },

    /**
     * A way to delete a holder's entry behind its back: the store's own ({@link StoreFaults#deleteLockEntry}), else
     * breaking the key ({@link Capabilities.Operation#BREAK}).
     */
    ENTRY_DELETION {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return fixture.storeFaults().isPresent() || capabilities.offers(Capabilities.Operation.BREAK)
                    ? Optional.empty()
                    : Optional.of("nothing can delete a holder's entry behind its back: no store faults given"
                            + " (LockerFixture.storeFaults()) and no BREAK declared (Capabilities.operations() "
                            + capabilities.operations() + ")");
        }
    },

    /** Worker processes that reach the store ({@link LockerFixture#multiProcessSupport()}). */
    OTHER_PROCESSES {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            MultiProcessSupport support = fixture.multiProcessSupport();
            return support.workerUri().isPresent()
                    ? Optional.empty()
                    : Optional.of("multi-process tests skipped: " + support.reason());
        }
    },

    /** A URI whose store cannot be reached ({@link LockerFixture#unreachableUri()}). */
    UNREACHABLE_URI {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return fixture.unreachableUri().isPresent()
                    ? Optional.empty()
                    : Optional.of("no unreachable URI given: override LockerFixture.unreachableUri() to run the"
                            + " connect-timeout test");
        }
    },

    /** Faults injected into the store itself ({@link LockerFixture#storeFaults()}). */
    STORE_FAULTS {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return fixture.storeFaults().isPresent()
                    ? Optional.empty()
                    : Optional.of("no store faults given: override LockerFixture.storeFaults() to run the tests of a"
                            + " store that stops or whose lock entry is deleted out of band");
        }
    },

    /** Faults of single nodes of a store of several ({@link StoreFaults#nodeFaults()}), one of which may die. */
    NODE_FAULTS {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            Optional<NodeFaults> nodes = fixture.storeFaults().flatMap(StoreFaults::nodeFaults);
            if (nodes.isEmpty()) {
                return Optional.of(
                        "no node faults given: override StoreFaults.nodeFaults() with the nodes of a store of"
                                + " several to run the tests of a minority or a majority of nodes killed");
            }
            NodeFaults given = nodes.get();
            return given.nodeCount() - given.quorum() >= 1
                    ? Optional.empty()
                    : Optional.of("the store's " + given.nodeCount() + " node(s) need all " + given.quorum()
                            + " to serve: no node may die, so there is no minority to kill");
        }
    },

    /** Lockers reaching the store through proxies that can be cut ({@link StoreFaults#clientPartition()}). */
    CLIENT_PARTITION {
        @Override
        Optional<String> missing(LockerFixture fixture, Capabilities capabilities) {
            return fixture.storeFaults().flatMap(StoreFaults::clientPartition).isPresent()
                    ? Optional.empty()
                    : Optional.of("no client partition given: override StoreFaults.clientPartition() with lockers that"
                            + " reach the store through the fixtures' TCP proxies to run the partition tests");
        }
    };

    /** Why the test cannot run against this fixture and backend; empty if it can. */
    abstract Optional<String> missing(LockerFixture fixture, Capabilities capabilities);

    private static Optional<String> operation(
            LockerFixture fixture, Capabilities capabilities, Capabilities.Operation operation) {
        Optional<String> elsewhere = fixture.operationsTestedElsewhere();
        if (elsewhere.isPresent()) {
            return elsewhere;
        }
        return capabilities.offers(operation)
                ? Optional.empty()
                : Optional.of("backend declares no " + operation + " (Capabilities.operations() "
                        + capabilities.operations() + ")");
    }
}
