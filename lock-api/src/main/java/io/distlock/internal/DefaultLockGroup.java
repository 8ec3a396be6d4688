package io.distlock.internal;

import io.distlock.RemoteLock;
import io.distlock.RemoteLockGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The locks of one {@code lockAll}, released together in reverse order. The group is lost when its first lock is:
 * its listeners then fire once.
 */
final class DefaultLockGroup implements RemoteLockGroup {

    private static final Logger log = LoggerFactory.getLogger(DefaultLockGroup.class);

    /** A group listener and where it runs. */
    private record Listener(Consumer<? super RemoteLockGroup> listener, Executor executor) {}

    private final List<RemoteLock> locks;
    private final Executor defaultExecutor;
    private final List<Listener> listeners = new ArrayList<>();
    private boolean lost; // guarded by this

    DefaultLockGroup(List<RemoteLock> locks, Executor defaultExecutor) {
        this.locks = List.copyOf(locks);
        this.defaultExecutor = defaultExecutor;
        for (RemoteLock lock : this.locks) {
            // runs on the thread that reports the loss; the group's own listeners go to their executors
            lock.onLost(l -> lost(), Runnable::run);
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
        return register(listener, null);
    }

    @Override
    public RemoteLockGroup onLost(Consumer<? super RemoteLockGroup> listener, Executor executor) {
        return register(listener, Objects.requireNonNull(executor, "executor"));
    }

    private RemoteLockGroup register(Consumer<? super RemoteLockGroup> listener, Executor executor) {
        Objects.requireNonNull(listener, "listener");
        boolean fireNow;
        synchronized (this) {
            fireNow = lost;
            if (!fireNow) {
                listeners.add(new Listener(listener, executor));
            }
        }
        if (fireNow) {
            if (executor == null) {
                notify(listener);
            } else {
                fire(new Listener(listener, executor));
            }
        }
        return this;
    }

    private void lost() {
        List<Listener> toNotify;
        synchronized (this) {
            if (lost) {
                return;
            }
            lost = true;
            toNotify = List.copyOf(listeners);
            listeners.clear();
        }
        toNotify.forEach(this::fire);
    }

    private void fire(Listener l) {
        Executor executor = l.executor() != null ? l.executor() : defaultExecutor;
        try {
            executor.execute(() -> notify(l.listener()));
        } catch (RejectedExecutionException e) {
            notify(l.listener());
        }
    }

    private void notify(Consumer<? super RemoteLockGroup> listener) {
        try {
            listener.accept(this);
        } catch (RuntimeException e) {
            log.warn("An onLost listener of lock group {} threw", this, e);
        }
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
