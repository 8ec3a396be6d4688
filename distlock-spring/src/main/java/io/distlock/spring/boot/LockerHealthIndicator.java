package io.distlock.spring.boot;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Whether the locker's store answers, and how many of its locks are held and were lost. The check is one lock attempt
 * on the probe key, released at once: a store that grants it or answers that someone else holds it is up.
 */
final class LockerHealthIndicator extends AbstractHealthIndicator {

    private final RemoteLocker locker;
    private final String probeKey;
    private final LockStatistics statistics;

    /** {@code statistics} null: the locker is the application's own, whose locks are not counted. */
    LockerHealthIndicator(RemoteLocker locker, String probeKey, LockStatistics statistics) {
        super("distlock health check failed");
        this.locker = locker;
        this.probeKey = probeKey;
        this.statistics = statistics;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        if (statistics != null) {
            builder.withDetail("store", statistics.scheme())
                    .withDetail("held", statistics.held())
                    .withDetail("lost", statistics.lost());
        }
        Optional<RemoteLock> probe = locker.tryLock(probeKey); // throws if the store does not answer: DOWN
        probe.ifPresent(RemoteLock::release);
        builder.up();
    }
}
