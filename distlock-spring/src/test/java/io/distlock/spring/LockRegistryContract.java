package io.distlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockObserver;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.toolkit.ManualTicker;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * What {@link RemoteLockRegistry}'s locks promise, on a real store: a subclass names the store and how to delete a
 * lock behind its holder. "Another process" is a second locker with its own registry.
 */
abstract class LockRegistryContract {

    static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration SHORT = Duration.ofMillis(300);

    private final AtomicInteger grants = new AtomicInteger();
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private RemoteLocker locker;
    private RemoteLocker otherLocker;
    RemoteLockRegistry registry;
    private RemoteLockRegistry otherProcess;
    String key;

    /** The store's URI. */
    abstract String uri();

    /** Deletes the store's entry of the lock on {@code key}, as an operator would, behind its holder. */
    abstract void deleteBehindHolder(String key) throws Exception;

    @BeforeEach
    void open(TestInfo test) {
        key = test.getTestMethod().orElseThrow().getName();
        locker = RemoteLockers.builder().uri(uri()).observer(grantCounter()).build();
        otherLocker = RemoteLockers.open(uri());
        registry = new RemoteLockRegistry(locker);
        otherProcess = new RemoteLockRegistry(otherLocker);
    }

    @AfterEach
    void close() {
        threads.shutdownNow();
        locker.close();
        otherLocker.close();
    }

    /** Counts the store locks granted to {@link #locker}. */
    private LockObserver grantCounter() {
        return (scheme, key, kind) -> new LockObserver.Acquisition() {
            @Override
            public LockObserver.Hold granted(RemoteLock lock) {
                grants.incrementAndGet();
                return new LockObserver.Hold() {};
            }

            @Override
            public void ended(LockObserver.Outcome outcome, Throwable failure) {}
        };
    }

    static Duration scaled(Duration base) {
        return TestTimeouts.scaled(base);
    }

    /** Runs {@code call} on another thread of this process and returns its result. */
    <T> T onOtherThread(Callable<T> call) throws Exception {
        return threads.submit(call).get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The lock on {@link #key}, locked by the other process. */
    private DistributedLock heldByTheOtherProcess() {
        DistributedLock theirs = otherProcess.obtain(key);
        theirs.lock();
        return theirs;
    }

    private boolean otherProcessCanLock() throws Exception {
        return onOtherThread(() -> {
            Lock lock = otherProcess.obtain(key);
            if (!lock.tryLock()) {
                return false;
            }
            lock.unlock();
            return true;
        });
    }

    @Test
    void obtain_givesOneLockPerKey() {
        assertThat(registry.obtain(key)).isSameAs(registry.obtain(key));
        assertThat(registry.obtain(key)).isNotSameAs(registry.obtain(key + "-2"));
        assertThatThrownBy(() -> registry.obtain(42))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("strings");
    }

    @Test
    void lock_excludesAnotherProcess_untilUnlocked() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        assertThat(otherProcessCanLock()).isFalse();
        lock.unlock();
        assertThat(otherProcessCanLock()).isTrue();
    }

    @Test
    void lock_isReentrant_withOneStoreLock_releasedByTheLastUnlock() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        lock.lockInterruptibly();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        assertThat(grants).as("store locks granted").hasValue(1);
        lock.unlock();
        lock.unlock();
        lock.unlock();
        assertThat(otherProcessCanLock()).as("held until the last unlock").isFalse();
        lock.unlock();
        assertThat(otherProcessCanLock()).isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void unlock_byAnotherThread_throws_andKeepsTheLock() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        Future<?> unlock = threads.submit(lock::unlock);
        assertThatThrownBy(() -> unlock.get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not held by this thread");
        assertThat(otherProcessCanLock()).isFalse();
        lock.unlock();
    }

    @Test
    void unlock_onAnInterruptedThread_releases_andKeepsTheFlag() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        Thread.currentThread().interrupt();
        lock.unlock();
        assertThat(Thread.interrupted()).isTrue();
        assertThat(otherProcessCanLock()).isTrue();
    }

    @Test
    void unlock_withoutLock_throws() {
        assertThatThrownBy(() -> registry.obtain(key).unlock()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void tryLock_whileAnotherThreadOfThisProcessHoldsIt_isFalse() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        assertThat(onOtherThread(() -> lock.tryLock())).isFalse();
        assertThat(onOtherThread(() -> lock.tryLock(100, TimeUnit.MILLISECONDS)))
                .isFalse();
        lock.unlock();
        assertThat(onOtherThread(() -> {
                    boolean got = lock.tryLock();
                    lock.unlock();
                    return got;
                }))
                .isTrue();
    }

    @Test
    void tryLock_withTime_waitsForAnotherProcess() throws Exception {
        DistributedLock theirs = heldByTheOtherProcess();
        Lock lock = registry.obtain(key);
        long start = System.nanoTime();
        assertThat(lock.tryLock(SHORT.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SHORT);
        assertThat(lock.tryLock()).isFalse();

        Future<Boolean> waiting = threads.submit(() -> lock.tryLock(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS));
        theirs.unlock();
        assertThat(waiting.get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(otherProcessCanLock()).isFalse();
    }

    @Test
    void lockInterruptibly_interrupted_throws_andLeavesNothingHeld() throws Exception {
        DistributedLock theirs = heldByTheOtherProcess();
        Lock lock = registry.obtain(key);
        Waiter<Throwable> waiter = parked(() -> {
            try {
                lock.lockInterruptibly();
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        waiter.thread().interrupt();
        assertThat(waiter.result().get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(InterruptedException.class);
        theirs.unlock();
        assertThat(lock.tryLock())
                .as("nothing left held by the interrupted thread")
                .isTrue();
        lock.unlock();
    }

    @Test
    void lock_isNotInterruptible_andKeepsTheInterruptFlag() throws Exception {
        DistributedLock theirs = heldByTheOtherProcess();
        Lock lock = registry.obtain(key);
        Waiter<Boolean> waiter = parked(() -> {
            lock.lock();
            boolean interrupted = Thread.interrupted();
            lock.unlock();
            return interrupted;
        });
        waiter.thread().interrupt();
        awaitWaiting(waiter.thread()); // waits on
        assertThat(waiter.result()).isNotDone();
        theirs.unlock();
        assertThat(waiter.result().get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
    }

    @Test
    void aLockLostInTheStore_failsRenewal_andItsLastUnlockThrowsConcurrentModificationException() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        registry.renewLock(key);
        deleteBehindHolder(key);
        Deadlines.await(
                () -> {
                    try {
                        registry.renewLock(key);
                        return false;
                    } catch (IllegalStateException e) {
                        return e.getMessage().contains("lost");
                    }
                },
                WAIT,
                () -> "the loss of '" + key + "' noticed");
        assertThatThrownBy(lock::unlock)
                .as("as Spring's RedisLockRegistry and JdbcLockRegistry throw it")
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("was lost before it was unlocked");
        assertThatThrownBy(lock::unlock).as("given up all the same").isInstanceOf(IllegalStateException.class);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    void lockWithTtl_holdsAFixedLease_thatEndsUnlessRenewed() throws Exception {
        DistributedLock lock = registry.obtain(key);
        lock.lock(scaled(Duration.ofSeconds(1)));
        assertThat(otherProcessCanLock()).isFalse();
        registry.renewLock(key); // the same lease again, from now
        awaitOtherProcessCanLock("the fixed lease ended");
        assertThatThrownBy(() -> registry.renewLock(key)).hasMessageContaining("lost");
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void renewLockWithTtl_turnsARenewedLockIntoAFixedLease() throws Exception {
        Lock lock = registry.obtain(key);
        lock.lock();
        registry.renewLock(key, scaled(Duration.ofSeconds(1)));
        assertThat(otherProcessCanLock()).isFalse();
        awaitOtherProcessCanLock("the lease set by renewLock ended");
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void tryLockWithTtl_waitsForAnotherProcess_andIsReentrant() throws Exception {
        DistributedLock theirs = heldByTheOtherProcess();
        DistributedLock lock = registry.obtain(key);
        Duration ttl = scaled(WAIT);
        assertThat(lock.tryLock(SHORT, ttl)).isFalse();
        Future<Boolean> waiting = threads.submit(() -> {
            boolean got = lock.tryLock(scaled(WAIT), ttl) && lock.tryLock(Duration.ZERO, ttl);
            boolean heldMeanwhile = !otherProcessCanLock();
            lock.unlock();
            lock.unlock();
            return got && heldMeanwhile;
        });
        theirs.unlock();
        assertThat(waiting.get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(grants).hasValue(1);
        assertThat(otherProcessCanLock()).isTrue();
        assertThatThrownBy(() -> lock.tryLock(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ttl must be positive; got 0s");
        assertThat(lock.tryLock()).as("nothing left held").isTrue();
        lock.unlock();
    }

    private void awaitOtherProcessCanLock(String what) {
        Deadlines.await(
                () -> {
                    try {
                        return otherProcessCanLock();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                },
                WAIT,
                () -> what);
    }

    @Test
    void renewLock_ofALockNotHeld_throws() {
        assertThatThrownBy(() -> registry.renewLock(key))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not held in this process");
    }

    @Test
    void newCondition_isUnsupported() {
        assertThatThrownBy(() -> registry.obtain(key).newCondition()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void executeLocked_runsUnderTheLock() throws Exception {
        boolean heldMeanwhile = registry.executeLocked(key, () -> !otherProcessCanLock());
        assertThat(heldMeanwhile).isTrue();
        assertThat(otherProcessCanLock()).isTrue();
    }

    @Test
    void expireUnusedOlderThan_dropsOnlyLocksNotHeld() {
        ManualTicker ticker = new ManualTicker();
        RemoteLockRegistry expiring = new RemoteLockRegistry(locker, ticker);
        DistributedLock unused = expiring.obtain(key + "-unused");
        DistributedLock held = expiring.obtain(key + "-held");
        held.lock();
        ticker.advance(Duration.ofMinutes(2));
        expiring.expireUnusedOlderThan(Duration.ofMinutes(1).toMillis());
        assertThat(expiring.obtain(key + "-held")).isSameAs(held);
        assertThat(expiring.obtain(key + "-unused")).isNotSameAs(unused);
        held.unlock();
    }

    /** A call running on another thread. */
    record Waiter<T>(Thread thread, Future<T> result) {}

    /** Starts {@code call} on another thread and returns once that thread is parked (waiting for the lock). */
    <T> Waiter<T> parked(Callable<T> call) throws Exception {
        CompletableFuture<Thread> started = new CompletableFuture<>();
        Future<T> result = threads.submit(() -> {
            started.complete(Thread.currentThread());
            return call.call();
        });
        Thread thread = started.get(scaled(WAIT).toMillis(), TimeUnit.MILLISECONDS);
        awaitWaiting(thread);
        return new Waiter<>(thread, result);
    }

    /** Waits until {@code thread} is parked (waiting for the store or the local lock). */
    static void awaitWaiting(Thread thread) {
        Deadlines.await(
                () -> thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING,
                WAIT,
                () -> thread.getName() + " waiting");
    }
}
