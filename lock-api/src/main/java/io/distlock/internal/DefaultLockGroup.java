package io.distlock.internal;

import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The locks of one {@code lockAll}, released together in reverse order. The group is lost when its first lock is:
 * its listeners then fire once.
 */
final class DefaultLockGroup implements RemoteLockGroup {

    private final List<RemoteLock> locks;
    private final LossListeners<RemoteLockGroup> lossListeners;

    DefaultLockGroup(List<RemoteLock> locks, Executor defaultExecutor) {
        this.locks = List.copyOf(locks);
        this.lossListeners = new LossListeners<>(this, defaultExecutor);
        for (RemoteLock lock : this.locks) {
            // runs on the thread that reports the loss; the group's own listeners go to their executors
            lock.onLost(l -> lossListeners.lost(), Runnable::run);
        }
    }

    @Override
    public List<RemoteLock> locks() {
        return locks;
    }

    @Override
    public boolean isHeld() {
        return locks.stream().allMatch(RemoteLock::isHeld);
    }

    @Override
    public RemoteLockGroup onLost(Consumer<? super RemoteLockGroup> listener) {
        lossListeners.add(listener, null);
        return this;
    }

    @Override
    public RemoteLockGroup onLost(Consumer<? super RemoteLockGroup> listener, Executor executor) {
        lossListeners.add(listener, Objects.requireNonNull(executor, "executor"));
        return this;
    }

    @Override
    public void close() {
        releaseInReverse(locks);
    }

    /** Releases {@code locks} last-first; every release is attempted, the first failure is thrown. */
    static void releaseInReverse(List<? extends RemoteLock> locks) {
        RuntimeException failure = null;
        for (int i = locks.size() - 1; i >= 0; i--) {
            try {
                locks.get(i).release();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "RemoteLockGroup" + locks;
    }
}
