package io.distlock.shedlock;

import io.distlock.RemoteLock;
import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * One ShedLock lock over a distlock lock held for a fixed lease. ShedLock's {@link AbstractSimpleLock} makes it single
 * use: after {@code unlock()} or {@code extend(...)} it throws {@link IllegalStateException}.
 */
final class DistlockSimpleLock extends AbstractSimpleLock {

    private final RemoteLock lock;

    DistlockSimpleLock(LockConfiguration configuration, RemoteLock lock) {
        super(configuration);
        this.lock = lock;
    }

    /**
     * Gives the lock up now but leaves it in the store until {@code lockAtLeastUntil}; at once if that has passed.
     * {@code releaseAfter} throws {@link io.distlock.LockBackendException} if the store cannot be told, and the lock
     * then ends with its lease, at {@code lockAtMostFor}.
     */
    @Override
    protected void doUnlock() {
        lock.releaseAfter(Duration.between(ClockProvider.now(), lockConfiguration.getLockAtLeastUntil()));
    }

    /** Ends the lease {@code lockAtMostFor} from now; empty if the lock has ended (expired, lost or released). */
    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration extended) {
        Duration lockAtMostFor = DistlockLockProvider.requirePositive(extended.getLockAtMostFor(), extended.getName());
        if (!lock.extend(lockAtMostFor)) {
            return Optional.empty();
        }
        return Optional.of(new DistlockSimpleLock(extended, lock));
    }

    @Override
    public String toString() {
        return "DistlockSimpleLock[" + lockConfiguration + ", " + lock + "]";
    }
}
