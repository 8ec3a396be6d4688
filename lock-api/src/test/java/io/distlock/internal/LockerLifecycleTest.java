package io.distlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** close() against waiters and grants in flight, on the real in-memory store. */
class LockerLifecycleTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static String uri(TestInfo test) {
        return "memory://lifecycle-" + test.getTestMethod().orElseThrow().getName();
    }

    @Test
    void close_whileCallsWaitForALock_endsEveryWaitWithLockerClosedException(TestInfo test) throws Exception {
        try (RemoteLocker holderSide = RemoteLockers.open(uri(test))) {
            RemoteLock held = holderSide.lock("k", WAIT);
            RemoteLocker locker = RemoteLockers.open(uri(test));
            List<CompletableFuture<RemoteLock>> waits = new ArrayList<>();
            waits.add(CompletableFuture.supplyAsync(() -> call(() -> locker.lock("k"))));
            waits.add(CompletableFuture.supplyAsync(() -> call(() -> locker.lock("k", Duration.ofHours(1)))));
            waits.add(locker.lockAsync("k", Duration.ofHours(1)));
            Waits.until("the blocking waiters to queue", WAIT, () -> blockedIn("LockSpace") >= 2);

            locker.close();

            for (CompletableFuture<RemoteLock> wait : waits) {
                assertThatThrownBy(() -> wait.get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause()
                        .isInstanceOf(LockerClosedException.class)
                        .hasMessageContaining("closed");
            }
            held.release();
            assertThat(holderSide.tryLock("k"))
                    .as("no waiter is left in the queue")
                    .isPresent();
        }
    }

    @Test
    void grant_racingClose_isReleasedInTheStoreAtOnce(TestInfo test) throws Exception {
        HookedProvider hooked = new HookedProvider();
        CountDownLatch grantedInStore = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        hooked.afterGrant = lease -> {
            grantedInStore.countDown();
            awaitQuietly(closed);
        };
        RemoteLocker locker = RemoteLockers.builder()
                .uri(uri(test))
                .provider(hooked)
                .leaseTime(Duration.ofHours(1))
                .build();
        CompletableFuture<Optional<RemoteLock>> attempt = CompletableFuture.supplyAsync(() -> locker.tryLock("k"));
        assertThat(grantedInStore.await(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS))
                .isTrue();

        CompletableFuture<Void> closing = CompletableFuture.runAsync(locker::close);
        Waits.until("close() to begin", WAIT, () -> locker.toString().contains("closed"));
        closed.countDown();
        closing.get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS);

        assertThatThrownBy(() -> attempt.get(Waits.scaled(WAIT).toSeconds(), TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(LockerClosedException.class);
        try (RemoteLocker other = RemoteLockers.open(uri(test))) {
            assertThat(other.tryLock("k"))
                    .as("the grant that raced close() was released at once, not left for its hour-long lease")
                    .isPresent();
        }
    }

    private interface Call<T> {
        T call() throws Exception;
    }

    private static <T> T call(Call<T> call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Threads parked with a frame of {@code className} on their stack. */
    static long blockedIn(String className) {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getState() == Thread.State.TIMED_WAITING
                        || e.getKey().getState() == Thread.State.WAITING)
                .filter(e -> java.util.Arrays.stream(e.getValue())
                        .anyMatch(f -> f.getClassName().endsWith(className)))
                .count();
    }
}
