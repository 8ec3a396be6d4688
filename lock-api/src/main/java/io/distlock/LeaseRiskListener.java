package io.distlock;

import java.time.Duration;

/**
 * Told that a held lock is at risk: its renewals (or its session's keep-alive) have been failing and the validity left
 * has fallen below the locker's threshold ({@link RemoteLockerBuilder#atRiskThreshold}, default a third of the lease
 * time), so the lock will be lost unless the store answers again soon. It comes before {@link RemoteLock#onLost}, in
 * time to stop cleanly: finish or checkpoint the work, stop writing. Once per episode: {@link #atRisk} when the
 * threshold is crossed, then {@link #recovered} if a renewal succeeds (or the session is confirmed) again before the
 * loss, so the holder can go on; the next failing episode warns again. Never called while renewals succeed, nor for a
 * fixed lease ({@link RemoteLocker#lockFor}), which is meant to end.
 *
 * <p>Runs on the executor given with it, else on the locker's listener executor, never on the thread that keeps time.
 * Registered with {@link RemoteLock#onAtRisk}. The model is the DynamoDB lock client's session monitor.
 */
public interface LeaseRiskListener {

    /**
     * The lock is at risk.
     *
     * @param lock the lock
     * @param validityLeft how long the store still guarantees it, as measured when the warning was raised
     */
    void atRisk(RemoteLock lock, Duration validityLeft);

    /** A renewal succeeded (or the session was confirmed) after {@link #atRisk}: the lock is safe again. */
    default void recovered(RemoteLock lock) {}
}
