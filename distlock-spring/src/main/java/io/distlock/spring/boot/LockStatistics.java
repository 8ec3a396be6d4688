package io.distlock.spring.boot;

import io.distlock.LockObserver;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Counts the locks of the auto-configured locker that are held now and that were lost, for the health indicator. Not a
 * {@link LockObserver} itself (the application's observer bean is looked up by that type): {@link #around} gives the
 * observer that counts and passes every callback on.
 */
final class LockStatistics {

    private final AtomicLong held = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private volatile String scheme = "";

    /** An observer that counts into this and passes every callback on to {@code next}. */
    LockObserver around(LockObserver next) {
        return new Counting(next);
    }

    long held() {
        return held.get();
    }

    long lost() {
        return lost.get();
    }

    /** The store's URI scheme ({@code zk}, {@code redis}, ...); empty before the locker is open. */
    String scheme() {
        return scheme;
    }

    private final class Counting implements LockObserver {

        private final LockObserver next;

        Counting(LockObserver next) {
            this.next = next;
        }

        @Override
        public void lockerOpened(String scheme, Optional<LongSupplier> storeRequests) {
            LockStatistics.this.scheme = scheme;
            next.lockerOpened(scheme, storeRequests);
        }

        @Override
        public void lockerClosed(String scheme, Optional<LongSupplier> storeRequests) {
            next.lockerClosed(scheme, storeRequests);
        }

        @Override
        public Acquisition acquisitionStarted(String scheme, String key, Kind kind) {
            Acquisition acquisition = next.acquisitionStarted(scheme, key, kind);
            return new Acquisition() {
                @Override
                public Hold granted(RemoteLock lock) {
                    held.incrementAndGet();
                    return new CountedHold(acquisition.granted(lock));
                }

                @Override
                public void ended(Outcome outcome, Throwable failure) {
                    acquisition.ended(outcome, failure);
                }
            };
        }

        private final class CountedHold implements Hold {

            private final Hold hold;

            CountedHold(Hold hold) {
                this.hold = hold;
            }

            @Override
            public void renewed(Duration took) {
                hold.renewed(took);
            }

            @Override
            public void renewalFailed(Duration took, Throwable failure) {
                hold.renewalFailed(took, failure);
            }

            @Override
            public void lost(String reason) {
                held.decrementAndGet();
                lost.incrementAndGet();
                hold.lost(reason);
            }

            @Override
            public void released(ReleaseResult result) {
                held.decrementAndGet();
                if (result == ReleaseResult.ALREADY_LOST) {
                    lost.incrementAndGet(); // the store had dropped it before the release
                }
                hold.released(result);
            }
        }
    }
}
