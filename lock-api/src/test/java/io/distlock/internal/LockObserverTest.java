package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockKind;
import io.distlock.LockObserver;
import io.distlock.LockTimeoutException;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** What a locker reports to its {@link LockObserver}, on the real in-memory store. */
class LockObserverTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Every callback as one line: {@code started k LOCK}, {@code granted k}, {@code ended k TIMED_OUT}, ... */
    private static final class Recording implements LockObserver {
        final List<String> events = new CopyOnWriteArrayList<>();
        volatile boolean failing;
        /** Whether {@code lockerClosed} is recorded ({@code closed memory}); most tests read the events after it. */
        volatile boolean recordsClose;
        /** Runs inside {@code granted}, before the hold is returned to the locker. */
        volatile Consumer<String> whileGranting = key -> {};

        @Override
        public void lockerOpened(String scheme, Optional<LongSupplier> storeRequests) {
            events.add("opened " + scheme);
        }

        @Override
        public void lockerClosed(String scheme, Optional<LongSupplier> storeRequests) {
            if (recordsClose) {
                events.add("closed " + scheme);
            }
        }

        @Override
        public Acquisition acquisitionStarted(String scheme, String key, Kind kind) {
            record("started " + key + " " + kind);
            return new Acquisition() {
                @Override
                public Hold granted(RemoteLock lock) {
                    record("granted " + key);
                    whileGranting.accept(key);
                    return new Hold() {
                        @Override
                        public void renewed(Duration took) {
                            if (!events.contains("renewed " + key)) {
                                record("renewed " + key);
                            }
                        }

                        @Override
                        public void lost(String reason) {
                            record("lost " + key);
                        }

                        @Override
                        public void released(ReleaseResult result) {
                            record("released " + key + " " + result);
                        }
                    };
                }

                @Override
                public void ended(Outcome outcome, Throwable failure) {
                    record("ended " + key + " " + outcome);
                }
            };
        }

        private void record(String event) {
            events.add(event);
            if (failing && !event.startsWith("started")) {
                throw new IllegalStateException("observer bug");
            }
        }
    }

    private static RemoteLocker open(TestInfo test, Recording observer, Duration leaseTime) {
        return RemoteLockers.builder()
                .uri("memory://observer-" + test.getTestMethod().orElseThrow().getName())
                .leaseTime(leaseTime)
                .observer(observer)
                .build();
    }

    @Test
    void everyOutcome_isReportedOnce_inOrder(TestInfo test) throws Exception {
        Recording seen = new Recording();
        try (RemoteLocker locker = open(test, seen, Duration.ofSeconds(30));
                RemoteLocker other = open(test, new Recording(), Duration.ofSeconds(30))) {
            RemoteLock held = locker.lock("a", WAIT);
            assertThat(other.tryLock("a")).isEmpty();
            assertThat(locker.tryLock("b")).isPresent().get().extracting(RemoteLock::release);
            RemoteLock blocker = other.lock("c", WAIT);
            assertThatThrownBy(() -> locker.lock("c", Duration.ofMillis(50))).isInstanceOf(LockTimeoutException.class);
            assertThatThrownBy(
                            () -> locker.lockAsync("c", Duration.ofMillis(50)).get(5, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(LockTimeoutException.class);
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> locker.lock("d")).isInstanceOf(InterruptedException.class);
            assertThat(held.release()).isEqualTo(ReleaseResult.RELEASED);
            blocker.release();
        }
        assertThat(seen.events)
                .containsExactly(
                        "opened memory",
                        "started a LOCK",
                        "granted a",
                        "started b TRY_LOCK",
                        "granted b",
                        "released b RELEASED",
                        "started c LOCK",
                        "ended c TIMED_OUT",
                        "started c LOCK",
                        "ended c TIMED_OUT",
                        "started d LOCK",
                        "ended d INTERRUPTED",
                        "released a RELEASED");
    }

    @Test
    void theKindOfEachGrant_reachesTheObserver_andAnObserverOfLocksOnlyHearsEveryAcquisition(TestInfo test)
            throws Exception {
        List<String> kinds = new CopyOnWriteArrayList<>();
        Recording locksOnly = new Recording(); // written before there were kinds: three arguments only
        LockObserver byKind = new LockObserver() {
            @Override
            public Acquisition acquisitionStarted(String scheme, String key, Kind kind) {
                throw new AssertionError("the locker calls the form that carries the kind");
            }

            @Override
            public Acquisition acquisitionStarted(String scheme, String key, Kind kind, LockKind lockKind) {
                kinds.add(key + " " + kind + " " + lockKind);
                return locksOnly.acquisitionStarted(scheme, key, kind);
            }
        };
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("memory://observer-" + test.getTestMethod().orElseThrow().getName())
                .observer(byKind)
                .build()) {
            locker.lock("k", WAIT).release();
            RemoteReadWriteLock rw = locker.readWriteLock("k");
            rw.readLock().lock(WAIT).release();
            rw.writeLock().tryLock().orElseThrow().release();
            locker.semaphore("k", 2).lockAsync(WAIT).get(10, TimeUnit.SECONDS).release();
            locker.semaphore("k", 2)
                    .tryLockAsync()
                    .get(10, TimeUnit.SECONDS)
                    .orElseThrow()
                    .release();
        }
        assertThat(kinds)
                .containsExactly(
                        "k LOCK LOCK", "k LOCK READ", "k TRY_LOCK WRITE", "k LOCK PERMIT", "k TRY_LOCK PERMIT");

        Recording seen = new Recording();
        try (RemoteLocker locker = open(test, seen, Duration.ofSeconds(30))) {
            locker.readWriteLock("r").readLock().lock(WAIT).release();
            locker.semaphore("s", 1).tryLock().orElseThrow().release();
        }
        assertThat(seen.events)
                .as("an observer that knows only the lock hears the other kinds' acquisitions as before")
                .containsExactly(
                        "opened memory",
                        "started r LOCK",
                        "granted r",
                        "released r RELEASED",
                        "started s TRY_LOCK",
                        "granted s",
                        "released s RELEASED");
    }

    @Test
    void close_isReportedOnce_afterTheLastLocksRelease(TestInfo test) throws Exception {
        Recording seen = new Recording();
        seen.recordsClose = true;
        RemoteLocker locker = open(test, seen, Duration.ofSeconds(30));
        locker.lock("a", WAIT);
        assertThat(seen.events).doesNotContain("closed memory");
        locker.close();
        locker.close();
        assertThat(seen.events).endsWith("released a RELEASED", "closed memory");
        assertThat(seen.events.stream().filter(e -> e.startsWith("closed"))).hasSize(1);
    }

    @Test
    void renewalsAndALoss_areReported_andNothingAfterTheLoss(TestInfo test) throws Exception {
        Recording seen = new Recording();
        try (RemoteLocker locker = open(test, seen, Duration.ofMillis(300))) {
            RemoteLock lock = locker.lock("k", WAIT);
            Waits.until("a renewal", WAIT, () -> seen.events.contains("renewed k"));
            lock.onLost(l -> {});
            ((DefaultRemoteLock) lock).markLost("deleted out of band");
            assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
        }
        assertThat(seen.events).endsWith("renewed k", "lost k");
    }

    @Test
    void anObserverThatThrows_changesNothing(TestInfo test) throws Exception {
        Recording seen = new Recording();
        seen.failing = true;
        try (RemoteLocker locker = open(test, seen, Duration.ofSeconds(30))) {
            RemoteLock lock = locker.lock("k", WAIT);
            assertThat(lock.isHeld()).isTrue();
            assertThat(lock.release()).isEqualTo(ReleaseResult.RELEASED);
            assertThat(locker.tryLock("k")).isPresent();
        }
        assertThat(seen.events).contains("started k LOCK", "granted k").doesNotContain("released k RELEASED");
    }

    @Test
    void aClosedLocker_reportsNothingMore(TestInfo test) {
        Recording seen = new Recording();
        RemoteLocker locker = open(test, seen, Duration.ofSeconds(30));
        locker.close();
        int before = seen.events.size();
        assertThatThrownBy(() -> locker.lock("k", WAIT)).isInstanceOf(LockerClosedException.class);
        assertThatThrownBy(() -> locker.tryLock("k")).isInstanceOf(LockerClosedException.class);
        assertThat(seen.events).hasSize(before);
    }

    @Test
    void tryLock_lostBetweenTheGrantAndItsAdoption_reportsTheHoldLost(TestInfo test) {
        HookedProvider hooked = new HookedProvider();
        Recording seen = new Recording();
        // The store's loss arrives after the grant, while the locker is still taking the lock on (reporting the grant)
        seen.whileGranting = key -> hooked.lossListeners.get(key).leaseLost("dropped by the store");
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("memory://observer-" + test.getTestMethod().orElseThrow().getName())
                .provider(hooked)
                .observer(seen)
                .build()) {
            Optional<RemoteLock> lock = locker.tryLock("k");
            lock.ifPresent(l -> assertThat(l.isHeld()).isFalse());
            lock.ifPresent(l -> assertThat(l.release()).isEqualTo(ReleaseResult.ALREADY_LOST));
        }
        assertThat(seen.events)
                .as("every hold reported granted ends, so that a count of held locks goes back to zero")
                .containsExactly("opened memory", "started k TRY_LOCK", "granted k", "lost k");
    }
}
