package io.distlock.internal;

import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import java.util.List;

/** The locks of one {@code lockAll}, released together in reverse order. */
final class DefaultLockGroup implements RemoteLockGroup {

    private final List<RemoteLock> locks;

    DefaultLockGroup(List<RemoteLock> locks) {
        this.locks = List.copyOf(locks);
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
