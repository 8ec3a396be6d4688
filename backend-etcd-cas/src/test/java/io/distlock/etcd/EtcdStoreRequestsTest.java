package io.distlock.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.FreePorts;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The requests a lock costs: one transaction to take it, one to free it; a waiter near the head of the queue is granted
 * by the release's deletion without a request more.
 */
class EtcdStoreRequestsTest extends OneMemberEtcdTests {

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().build();

    @Override
    EtcdCluster etcd() {
        return ETCD;
    }

    @ParameterizedTest
    @EnumSource(EtcdLockMode.class)
    void storeRequests_uncontendedAcquireAndRelease_countsTwoTxns(EtcdLockMode mode) throws Exception {
        String key = EtcdTesting.unique("count");
        Duration ttl = Duration.ofSeconds(60); // first keep-alive after 20 s: none falls inside the measurement
        try (LockBackend backend = backend(mode, EtcdTesting.uri(ETCD, PREFIX), ttl)) {
            long before = backend.storeRequests().orElseThrow();
            Lease lease = backend.acquire(request(key, ttl), Deadline.after(maxWait(), Ticker.system()))
                    .orElseThrow();
            assertTrue(backend.release(lease));
            assertEquals(
                    2,
                    backend.storeRequests().orElseThrow() - before,
                    "one txn to take, one txn to free (a lock released at once never watches its own key)");
        }
    }

    /**
     * A holder and two waiters, one and two behind it (three election candidates taking turns stand so): each waiter
     * puts its key, reads the keys ahead and watches the directory (and checks the keys once if the store moved on
     * before its watch started), and is then granted by the deletions it is told, in order, without another request. A
     * waiter that reads the queue after the deletion it waited for, as every waiter did before, makes one more.
     */
    @Test
    void storeRequests_waitersOneAndTwoBehind_areGrantedByTheDeletionsWithoutAnotherRequest() throws Exception {
        String key = EtcdTesting.unique("near-head");
        Duration ttl = Duration.ofSeconds(60); // no keep-alive inside the measurement
        // No probe of a parked wait inside it either: one comes after half the connect timeout without an answer.
        Duration quiet = Duration.ofSeconds(120);
        Duration wait = maxWait();
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (LockBackend holder = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl, quiet);
                LockBackend next = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl, quiet);
                LockBackend second = backend(EtcdLockMode.FAIR, EtcdTesting.uri(ETCD, PREFIX), ttl, quiet)) {
            Lease held = holder.acquire(request(key, ttl), Deadline.after(wait, Ticker.system()))
                    .orElseThrow();
            long nextBefore = next.storeRequests().orElseThrow();
            Future<Lease> nextGrant =
                    pool.submit(() -> next.acquire(request(key, ttl), Deadline.after(wait, Ticker.system()))
                            .orElseThrow());
            long nextWaiting = settled(next, nextBefore + 3, "the first waiter's put, read and watch");
            long secondBefore = second.storeRequests().orElseThrow();
            Future<Lease> secondGrant =
                    pool.submit(() -> second.acquire(request(key, ttl), Deadline.after(wait, Ticker.system()))
                            .orElseThrow());
            long secondWaiting = settled(second, secondBefore + 3, "the second waiter's put, read and watch");

            assertTrue(holder.release(held));
            Lease nextHeld = nextGrant.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(
                    nextWaiting,
                    next.storeRequests().orElseThrow(),
                    () -> "requests of the waiter one behind from the holder's release to its grant, "
                            + Duration.ofNanos(System.nanoTime() - started) + " into the test");
            assertTrue(next.release(nextHeld));
            Lease secondHeld = secondGrant.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals(
                    secondWaiting,
                    second.storeRequests().orElseThrow(),
                    () -> "requests of the waiter two behind from the holder's release to its grant, "
                            + Duration.ofNanos(System.nanoTime() - started) + " into the test");
            assertTrue(second.release(secondHeld));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The backend's request count once it has reached at least {@code atLeast} and has not moved for a while: the wait
     * parked on its watch, its check (if any) answered.
     */
    private static long settled(LockBackend backend, long atLeast, String what) throws InterruptedException {
        assertTrue(
                Deadlines.within(maxWait(), () -> backend.storeRequests().orElseThrow() >= atLeast),
                () -> what + " were not sent: " + backend.storeRequests().orElseThrow() + " requests of " + atLeast);
        return Deadlines.steady(
                () -> backend.storeRequests().orElseThrow(),
                TestTimeouts.scaled(Duration.ofMillis(300)),
                maxWait(),
                what + ": the request count");
    }

    /**
     * A lease's grant through an outage (nothing listens at the address) is repeated after pauses that double from 50 ms
     * to 500 ms, until its deadline. jetcd logs two WARN lines for every failed lease call; repeated every 50 ms, as
     * every request was, a grant printed 40 a second while etcd was away (the CI log of one run: 729 such lines).
     */
    @Test
    void grant_throughAnOutage_isRepeatedLessAndLessOften() throws Exception {
        withCallsToNowhere(calls -> {
            CompletableFuture<?> grant = calls.grant(10, Deadline.after(Duration.ofSeconds(3), Ticker.system()));
            ExecutionException failed = assertThrows(ExecutionException.class, () -> grant.get(30, TimeUnit.SECONDS));
            assertTrue(
                    failed.getCause().getMessage().contains("granting a lease"),
                    () -> "names what failed: " + failed.getCause());
            // Sent at 0, 0.05, 0.15, 0.35, 0.75, 1.25, 1.75, 2.25 and 2.75 s: 9; every 50 ms it was about 60.
            long sends = calls.requests();
            assertTrue(sends >= 5 && sends <= 10, () -> sends + " grants sent in 3 s");
        });
    }

    /**
     * A request waiting for its repeat as the locker closes fails at once, naming the close: before, the repeat was
     * dropped with the stopped timer, and the request (a lost session's revoke in the background) never ended.
     */
    @Test
    void revoke_whoseLockerClosesBetweenTwoSends_failsAtOnce_namingTheClose() throws Exception {
        withCallsToNowhere(calls -> {
            // A revoke in the background (a lost session's) meets the closing locker between two sends.
            CompletableFuture<?> revoke = calls.revoke(0x1234, Deadline.after(Duration.ofSeconds(60), Ticker.system()));
            Deadlines.await(
                    () -> calls.requests() >= 2,
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
                    () -> "the revoke was not repeated: " + calls.requests() + " sends");
            calls.endRepeats(); // as the backend's close does before it stops the timer
            calls.timer().shutdownNow();
            // Before, the repeat waiting on the stopped timer was dropped with it, and the revoke never ended.
            ExecutionException failed = assertThrows(
                    ExecutionException.class,
                    () -> revoke.get(TestTimeouts.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS));
            String message = failed.getCause().getMessage();
            assertTrue(
                    message.contains("revoking lease 1234") && message.contains("the locker was closed"),
                    () -> "names the request and the close: " + message);
        });
    }

    private interface CallsTest {
        void run(EtcdCalls calls) throws Exception;
    }

    /** Runs {@code test} with calls to an address where nothing listens (an etcd that is away), its own timer. */
    private static void withCallsToNowhere(CallsTest test) throws Exception {
        int port = FreePorts.next(); // nothing listens there
        BackendConfig config = new BackendConfig(
                URI.create("etcd://127.0.0.1:" + port + "/t"),
                Map.of(),
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                Duration.ZERO,
                Ticker.system(),
                Clock.systemUTC());
        Client client = EtcdConnection.read(config).build(config.connectTimeout(), builder -> builder);
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
        try {
            EtcdCalls calls = new EtcdCalls(client, "127.0.0.1:" + port, Ticker.system(), timer);
            test.run(calls);
        } finally {
            client.close();
            timer.shutdownNow();
        }
    }
}
