package io.distlock.internal;

import io.distlock.LockKind;
import io.distlock.LockObserver;
import io.distlock.LockTimeoutException;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A locker's {@link LockObserver}, made safe to call from the lock's own paths: a callback that throws is logged and
 * ignored, an acquisition is ended at most once (the first of {@code granted} and {@code ended} wins, so a grant
 * that races with a cancel is reported once), and nothing is reported for a hold after its release or loss.
 */
final class Observing {

    private static final Logger log = LoggerFactory.getLogger(Observing.class);

    /** A hold that reports nothing, for locks handed over without an observer (and before the grant). */
    static final LockObserver.Hold NO_HOLD = new LockObserver.Hold() {};

    private final LockObserver observer;
    private final String scheme;

    /**
     * What every acquisition is observed by when the locker has no observer ({@link LockObserver#none()}): one shared
     * acquisition that reports nothing, so that an unobserved lock allocates nothing for its observation. Null
     * otherwise.
     */
    private final Acquisition silent;

    Observing(LockObserver observer, String scheme) {
        this.observer = observer;
        this.scheme = scheme;
        this.silent = observer == LockObserver.none() ? new Acquisition(null) : null;
    }

    void lockerOpened(Optional<LongSupplier> storeRequests) {
        safely("lockerOpened", () -> observer.lockerOpened(scheme, storeRequests));
    }

    void lockerClosed(Optional<LongSupplier> storeRequests) {
        safely("lockerClosed", () -> observer.lockerClosed(scheme, storeRequests));
    }

    /** How a failure the caller is given ends an observed acquisition. */
    static LockObserver.Outcome outcomeOf(Throwable failure) {
        if (failure instanceof LockerClosedException) {
            return LockObserver.Outcome.CLOSED;
        }
        if (failure instanceof LockTimeoutException) {
            return LockObserver.Outcome.TIMED_OUT;
        }
        if (failure instanceof InterruptedException || failure instanceof CancellationException) {
            return LockObserver.Outcome.INTERRUPTED;
        }
        return LockObserver.Outcome.FAILED;
    }

    /** Starts observing one acquisition of a grant of {@code lockKind}, asked for the {@code kind} way. */
    Acquisition started(String key, LockObserver.Kind kind, LockKind lockKind) {
        if (silent != null) {
            return silent;
        }
        LockObserver.Acquisition[] inner = {null};
        safely("acquisitionStarted", () -> inner[0] = observer.acquisitionStarted(scheme, key, kind, lockKind));
        return new Acquisition(inner[0]);
    }

    /** One observed acquisition; ends once. */
    final class Acquisition {
        private final LockObserver.Acquisition inner;
        private final AtomicBoolean ended = new AtomicBoolean();

        private Acquisition(LockObserver.Acquisition inner) {
            this.inner = inner;
        }

        /** Reports the grant; the hold to report the lock's life to (a silent one if the observer gave none). */
        LockObserver.Hold granted(RemoteLock lock) {
            if (inner == null || !ended.compareAndSet(false, true)) {
                return NO_HOLD;
            }
            LockObserver.Hold[] hold = {null};
            safely("granted", () -> hold[0] = inner.granted(lock));
            return hold[0] == null ? NO_HOLD : new Hold(hold[0]);
        }

        void ended(LockObserver.Outcome outcome, Throwable failure) {
            if (inner != null && ended.compareAndSet(false, true)) {
                safely("ended", () -> inner.ended(outcome, failure));
            }
        }
    }

    /** One observed hold; reports nothing after its release or loss. */
    private final class Hold implements LockObserver.Hold {
        private final LockObserver.Hold inner;
        private final AtomicBoolean over = new AtomicBoolean();

        private Hold(LockObserver.Hold inner) {
            this.inner = inner;
        }

        @Override
        public void renewed(Duration took) {
            if (!over.get()) {
                safely("renewed", () -> inner.renewed(took));
            }
        }

        @Override
        public void renewalFailed(Duration took, Throwable failure) {
            if (!over.get()) {
                safely("renewalFailed", () -> inner.renewalFailed(took, failure));
            }
        }

        @Override
        public void lost(String reason) {
            if (over.compareAndSet(false, true)) {
                safely("lost", () -> inner.lost(reason));
            }
        }

        @Override
        public void released(ReleaseResult result) {
            if (over.compareAndSet(false, true)) {
                safely("released", () -> inner.released(result));
            }
        }
    }

    private void safely(String callback, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | LinkageError e) {
            log.warn(
                    "Lock observer {} failed in {}; ignored: {}",
                    observer.getClass().getName(),
                    callback,
                    e.toString());
        }
    }
}
