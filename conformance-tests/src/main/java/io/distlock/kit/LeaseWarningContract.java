package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LeaseRiskListener;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The early warning ({@link RemoteLock#onAtRisk}) beyond what the fault matrix checks (a holder cut off past its lease
 * is warned before it is told of the loss: {@link FaultMatrixContract}): never while renewals succeed, even with a
 * threshold the validity left crosses at every renewal; and a holder cut off until warned, then healed, is told it
 * recovered and keeps its lock.
 */
public interface LeaseWarningContract extends LockerFixture {

    /** A listener that records what it hears: "at risk" or "recovered". */
    private static LeaseRiskListener recording(List<String> heard) {
        return new LeaseRiskListener() {
            @Override
            public void atRisk(RemoteLock lock, Duration validityLeft) {
                heard.add("at risk");
            }

            @Override
            public void recovered(RemoteLock lock) {
                heard.add("recovered");
            }
        };
    }

    /**
     * A lock held for two leases while its renewals (or its session) succeed is never at risk, though the threshold
     * is nine tenths of the lease: the validity left falls below it between renewals, but nothing is failing.
     */
    @Test
    @Requires(Need.AT_RISK_WARNING)
    default void aLockWhoseRenewalsSucceed_isNeverAtRisk() throws Exception {
        String key = TestKeys.unique("never-at-risk");
        List<String> heard = new CopyOnWriteArrayList<>();
        Duration lease = shortLeaseTime();
        try (RemoteLocker locker = lockerBuilder()
                .leaseTime(lease)
                .atRiskThreshold(lease.multipliedBy(9).dividedBy(10))
                .build()) {
            RemoteLock lock = locker.lock(key, maxWait());
            lock.onAtRisk(recording(heard));
            Thread.sleep(lease.multipliedBy(2).toMillis());
            assertTrue(lock.isHeld(), "the lock on '" + key + "' after two leases of successful renewals");
            assertEquals(List.of(), heard, "what the listener of a lock whose renewals succeed heard");
            assertEquals(ReleaseResult.RELEASED, lock.release());
        }
    }

    /**
     * A holder cut off from the store until it is warned (its renewals failing, two thirds of its lease left), then
     * healed: told it recovered at its next renewal, and still the holder.
     */
    @Test
    @Requires({Need.CLIENT_PARTITION, Need.RENEWED_TTL_LEASES})
    default void aHolderCutOffUntilWarned_thenHealed_recovers_andKeepsItsLock() throws Exception {
        ClientPartition partition =
                storeFaults().flatMap(StoreFaults::clientPartition).orElseThrow();
        String key = TestKeys.unique("at-risk-healed");
        List<String> heard = new CopyOnWriteArrayList<>();
        Duration lease = leaseTime();
        try (RemoteLocker locker = partition
                .lockerBuilder()
                .leaseTime(lease)
                .atRiskThreshold(lease.multipliedBy(2).dividedBy(3))
                .build()) {
            RemoteLock lock = locker.lock(key, maxWait());
            lock.onAtRisk(recording(heard));
            partition.partition();
            try {
                Deadlines.await(
                        () -> !heard.isEmpty(),
                        lease,
                        () -> "the holder of '" + key + "', cut off from the store, was not warned within its lease"
                                + " (isHeld=" + lock.isHeld() + ")");
            } finally {
                partition.heal();
            }
            Deadlines.await(
                    () -> heard.size() >= 2 || !lock.isHeld(),
                    lease,
                    () -> "the healed holder of '" + key + "' heard " + heard);
            assertEquals(List.of("at risk", "recovered"), heard, "what the healed holder of '" + key + "' heard");
            assertTrue(lock.isHeld(), "the lock on '" + key + "' after it recovered");
            assertEquals(ReleaseResult.RELEASED, lock.release());
        }
    }
}
