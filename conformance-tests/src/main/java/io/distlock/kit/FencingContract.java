package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.RemoteLock;
import io.distlock.kit.history.HistoryChecker;
import io.distlock.kit.history.HistoryRecorder;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens: present exactly when the backend declares {@code fencing}, and strictly increasing per key in
 * acquisition order, whichever locker acquires.
 */
public interface FencingContract extends LockerFixture {

    /** A lock carries a fencing token exactly when the backend declares fencing. */
    @Test
    default void fencingToken_isPresent_exactlyWhenDeclared() throws Exception {
        boolean declared = Lockers.capabilities(this).fencing();
        try (Lockers lockers = Lockers.open(this, 1, leaseTime());
                RemoteLock lock = lockers.get(0).lock(TestKeys.unique("token-present"), maxWait())) {
            assertEquals(
                    declared,
                    lock.fencingToken().isPresent(),
                    "fencing token " + lock.fencingToken() + " while the backend declares fencing=" + declared);
        }
    }

    /**
     * Fencing tokens grow strictly in acquisition order: one after another through several lockers, then with
     * threads contending, every hold recorded and checked by {@link HistoryChecker}.
     */
    @Test
    @Requires(Need.FENCING)
    default void fencingTokens_increaseStrictly_inAcquisitionOrder() throws Exception {
        String key = TestKeys.unique("fencing");
        try (Lockers lockers = Lockers.open(this, 3, leaseTime());
                HistoryRecorder history = HistoryRecorder.inMemory()) {
            long previous = Long.MIN_VALUE;
            for (int n = 0; n < 12; n++) {
                try (RemoteLock lock = lockers.get(n).lock(key, maxWait())) {
                    OptionalLong token = lock.fencingToken();
                    assertTrue(token.isPresent(), "acquisition " + n + " has no fencing token");
                    long now = token.getAsLong();
                    long before = previous;
                    assertTrue(
                            now > before,
                            "acquisition " + n + " (locker " + (n % 3) + ") got token " + now + " after " + before);
                    previous = now;
                }
            }
            Concurrently.run("fencing", 6, maxWait().multipliedBy(3), i -> {
                for (int n = 0; n < acquisitionsPerThread(); n++) {
                    try (RemoteLock lock = lockers.get(i).lock(key, maxWait())) {
                        history.acquired(lock);
                        history.releasing(lock);
                    }
                }
            });
            HistoryChecker.assertConsistent(history.events());
        }
    }
}
