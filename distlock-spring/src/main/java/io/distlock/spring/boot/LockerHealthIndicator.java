package io.distlock.spring.boot;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Whether the locker's store answers, and how many of its locks are held and were lost. The check is one lock attempt
 * on the probe key, released as soon as it is granted: a store that grants it or answers that someone else holds it
 * within the check's timeout is up. A store that has not answered by then is down; its attempt goes on in the
 * background (released if granted late), and the next check waits for that one instead of starting another.
 */
final class LockerHealthIndicator extends AbstractHealthIndicator {

    private final RemoteLocker locker;
    private final String probeKey;
    private final Duration timeout;
    private final LockStatistics statistics;

    /** The attempt of the last check, done once its grant (if any) is released; guarded by this. */
    private CompletableFuture<Boolean> attempt;

    /** {@code statistics} null: the locker is the application's own, whose locks are not counted. */
    LockerHealthIndicator(RemoteLocker locker, String probeKey, Duration timeout, LockStatistics statistics) {
        super("distlock health check failed");
        this.locker = locker;
        this.probeKey = probeKey;
        this.timeout = timeout;
        this.statistics = statistics;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        try {
            attempt().get(timeout.toNanos(), TimeUnit.NANOSECONDS); // a failure is thrown: DOWN with the error
            builder.up();
        } catch (TimeoutException e) {
            builder.down().withDetail("error", "the store did not answer within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            if (statistics != null) { // read after the check, which a loss may have come with
                builder.withDetail("store", statistics.scheme())
                        .withDetail("held", statistics.held())
                        .withDetail("lost", statistics.lost());
            }
        }
    }

    private synchronized CompletableFuture<Boolean> attempt() {
        if (attempt == null || attempt.isDone()) {
            attempt = locker.tryLockAsync(probeKey).thenApply(probe -> {
                probe.ifPresent(RemoteLock::release); // before the check reads the counts
                return probe.isPresent();
            });
        }
        return attempt;
    }
}
