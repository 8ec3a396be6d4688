package io.distlock.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code onLost} listeners of one handle (a lock or a lock group): kept until the handle is lost, then each called
 * once with the handle; one registered after the loss is called at once. A listener runs on the executor it was
 * registered with, else on the locker's listener executor; registered without an executor after the loss, it runs on
 * the registering thread. A listener that throws is logged, never propagated. Thread-safe.
 *
 * @param <T> the handle type the listeners receive
 */
final class LossListeners<T> {

    private static final Logger log = LoggerFactory.getLogger(LossListeners.class);

    /** A listener and where it runs; a null executor is the default one. */
    private record Listener<T>(Consumer<? super T> listener, Executor executor) {}

    private final T handle;
    private final Executor defaultExecutor;
    private List<Listener<T>> listeners; // guarded by this; created on the first registration
    private boolean lost; // guarded by this

    /**
     * @param handle what the listeners are called with
     * @param defaultExecutor where a listener registered without an executor runs when the loss is reported
     */
    LossListeners(T handle, Executor defaultExecutor) {
        this.handle = handle;
        this.defaultExecutor = defaultExecutor;
    }

    /**
     * Registers {@code listener}, or calls it now if the handle is already lost: on {@code executor}, or on this
     * thread if {@code executor} is null.
     */
    void add(Consumer<? super T> listener, Executor executor) {
        Objects.requireNonNull(listener, "listener");
        synchronized (this) {
            if (!lost) {
                if (listeners == null) {
                    listeners = new ArrayList<>(2);
                }
                listeners.add(new Listener<>(listener, executor));
                return;
            }
        }
        if (executor == null) {
            notify(listener);
        } else {
            fire(new Listener<>(listener, executor));
        }
    }

    /** Marks the handle lost and hands every registered listener to its executor; a no-op after the first call. */
    void lost() {
        List<Listener<T>> toNotify;
        synchronized (this) {
            if (lost) {
                return;
            }
            lost = true;
            toNotify = listeners;
            listeners = null;
        }
        if (toNotify != null) {
            toNotify.forEach(this::fire);
        }
    }

    /** Drops the registered listeners unfired: the handle was released and can no longer be lost. */
    synchronized void clear() {
        listeners = null;
    }

    /** Hands a listener to its executor; one that refuses it (shut down) leaves it to the calling thread. */
    private void fire(Listener<T> l) {
        Executor executor = l.executor() != null ? l.executor() : defaultExecutor;
        try {
            executor.execute(() -> notify(l.listener()));
        } catch (RejectedExecutionException e) {
            notify(l.listener());
        }
    }

    private void notify(Consumer<? super T> listener) {
        try {
            listener.accept(handle);
        } catch (RuntimeException e) {
            log.warn("An onLost listener of {} threw", handle, e);
        }
    }
}
