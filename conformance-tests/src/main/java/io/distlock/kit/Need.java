package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
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
    };

    /** Why the test cannot run against this fixture and backend; empty if it can. */
    abstract Optional<String> missing(LockerFixture fixture, Capabilities capabilities);
}
