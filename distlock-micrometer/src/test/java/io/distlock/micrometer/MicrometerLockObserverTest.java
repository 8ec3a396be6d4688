package io.distlock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockObserver;
import io.distlock.LockTimeoutException;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import io.distlock.testing.ZooKeeperEnsemble;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The meters and observations of a locker's locks, against a real ZooKeeper server and the in-memory store. */
class MicrometerLockObserverTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().build();

    private final MeterRegistry meters = new SimpleMeterRegistry();

    private RemoteLocker zk(MicrometerLockObserver observer) {
        return RemoteLockers.builder()
                .uri("zk://" + ZK.connectString() + "/metrics")
                .observer(observer)
                .build();
    }

    private long acquisitions(String kind, String outcome) {
        Timer timer = meters.find(MicrometerLockObserver.ACQUIRE)
                .tags("store", "zk", "kind", kind, "outcome", outcome)
                .timer();
        return timer == null ? 0 : timer.count();
    }

    private double held() {
        return meters.get(MicrometerLockObserver.HELD)
                .tag("store", "zk")
                .gauge()
                .value();
    }

    @Test
    void theCounts_matchWhatTheLockersDid() throws Exception {
        MicrometerLockObserver observer = MicrometerLockObserver.create(meters);
        try (RemoteLocker locker = zk(observer);
                RemoteLocker other = zk(observer)) {
            RemoteLock first = locker.lock("account:1", WAIT);
            RemoteLock second = locker.lock("account:2", WAIT);
            assertThat(held()).isEqualTo(2);
            assertThat(other.tryLock("account:1")).isEmpty();
            assertThatThrownBy(() -> other.lock("account:2", Duration.ofMillis(200)))
                    .isInstanceOf(LockTimeoutException.class);
            assertThat(first.release()).isEqualTo(ReleaseResult.RELEASED);
            other.tryLock("account:1").orElseThrow().release();
            second.release();
            assertThat(held()).isZero();
        }
        assertThat(acquisitions("lock", "granted")).isEqualTo(2);
        assertThat(acquisitions("try_lock", "busy")).isEqualTo(1);
        assertThat(acquisitions("lock", "timed_out")).isEqualTo(1);
        assertThat(acquisitions("try_lock", "granted")).isEqualTo(1);
        assertThat(meters.get(MicrometerLockObserver.HOLD)
                        .tags("store", "zk", "end", "released")
                        .timer()
                        .count())
                .isEqualTo(3);
        assertThat(meters.get(MicrometerLockObserver.STORE_REQUESTS)
                        .tag("store", "zk")
                        .functionCounter()
                        .count())
                .as("the backend's own count of ZooKeeper requests")
                .isPositive();
        assertThat(meters.getMeters())
                .as("no key tags unless asked for")
                .allSatisfy(m -> assertThat(m.getId().getTag("key")).isNull());
    }

    @Test
    void theGrantsOfEachPrimitive_areToldApart() throws Exception {
        TestObservationRegistry observations = TestObservationRegistry.create();
        MicrometerLockObserver observer = MicrometerLockObserver.builder(meters)
                .observations(observations)
                .build();
        try (RemoteLocker locker = RemoteLockers.builder()
                        .uri("memory://metrics-primitives")
                        .observer(observer)
                        .build();
                RemoteLocker other = RemoteLockers.builder()
                        .uri("memory://metrics-primitives")
                        .observer(observer)
                        .build()) {
            RemoteReadWriteLock prices = locker.readWriteLock("prices");
            RemoteLock read = prices.readLock().lock(WAIT);
            RemoteLock otherRead = other.readWriteLock("prices").readLock().lock(WAIT);
            RemoteLock permit = locker.semaphore("imports", 2).lock(WAIT);
            RemoteLock lock = locker.lock("prices", WAIT); // the lock on the same key is another thing
            assertThat(held("read")).isEqualTo(2);
            assertThat(held("permit")).isEqualTo(1);
            assertThat(held("lock")).isEqualTo(1);
            assertThat(CompletableFuture.supplyAsync(() ->
                                    other.readWriteLock("prices").writeLock().tryLock())
                            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .as("a writer beside the readers")
                    .isEmpty();
            read.release();
            otherRead.release();
            prices.writeLock().tryLock().orElseThrow().release();
            permit.release();
            lock.release();
            assertThat(held("read")).isZero();
            assertThat(held("permit")).isZero();
        }
        assertThat(acquisitions("memory", "read", "lock", "granted")).isEqualTo(2);
        assertThat(acquisitions("memory", "write", "try_lock", "busy")).isEqualTo(1);
        assertThat(acquisitions("memory", "write", "try_lock", "granted")).isEqualTo(1);
        assertThat(acquisitions("memory", "permit", "lock", "granted")).isEqualTo(1);
        assertThat(acquisitions("memory", "lock", "lock", "granted")).isEqualTo(1);
        for (String primitive : List.of("lock", "read", "write", "permit")) {
            assertThat(meters.get(MicrometerLockObserver.HOLD)
                            .tags("store", "memory", MicrometerLockObserver.PRIMITIVE, primitive, "end", "released")
                            .timer()
                            .count())
                    .as("holds of %s", primitive)
                    .isEqualTo(primitive.equals("read") ? 2 : 1);
        }
        assertThat(meters.getMeters())
                .as("every meter of a grant says which primitive")
                .filteredOn(m -> !m.getId().getName().equals(MicrometerLockObserver.STORE_REQUESTS))
                .allSatisfy(m -> assertThat(m.getId().getTag(MicrometerLockObserver.PRIMITIVE))
                        .isIn("lock", "read", "write", "permit"));
        TestObservationRegistryAssert.assertThat(observations)
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue(MicrometerLockObserver.PRIMITIVE, "write")
                        .hasLowCardinalityKeyValue("outcome", "busy"));
    }

    private long acquisitions(String store, String primitive, String kind, String outcome) {
        Timer timer = meters.find(MicrometerLockObserver.ACQUIRE)
                .tags("store", store, MicrometerLockObserver.PRIMITIVE, primitive, "kind", kind, "outcome", outcome)
                .timer();
        return timer == null ? 0 : timer.count();
    }

    private double held(String primitive) {
        return meters.get(MicrometerLockObserver.HELD)
                .tags("store", "memory", MicrometerLockObserver.PRIMITIVE, primitive)
                .gauge()
                .value();
    }

    @Test
    void aLostLock_showsUp() throws Exception {
        MicrometerLockObserver observer = MicrometerLockObserver.create(meters);
        try (RemoteLocker locker = zk(observer);
                CuratorFramework operator =
                        CuratorFrameworkFactory.newClient(ZK.connectString(), new RetryOneTime(100))) {
            operator.start();
            RemoteLock lock = locker.lock("deleted", WAIT);
            CountDownLatch lost = new CountDownLatch(1);
            lock.onLost(l -> lost.countDown());
            for (String node : operator.getChildren().forPath("/metrics/deleted")) {
                operator.delete().forPath("/metrics/deleted/" + node); // an operator's delete, behind the holder
            }
            assertThat(lost.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(lock.release()).isEqualTo(ReleaseResult.ALREADY_LOST);
        }
        assertThat(meters.get(MicrometerLockObserver.LOST)
                        .tag("store", "zk")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(meters.get(MicrometerLockObserver.HOLD)
                        .tags("store", "zk", "end", "lost")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(held()).isZero();
    }

    @Test
    void aClosedLocker_recordsNothingMore() throws Exception {
        MicrometerLockObserver observer = MicrometerLockObserver.create(meters);
        RemoteLocker locker = zk(observer);
        locker.lock("k", WAIT).release();
        locker.close();
        List<String> before = snapshot();
        assertThatThrownBy(() -> locker.lock("k", WAIT)).isInstanceOf(LockerClosedException.class);
        assertThatThrownBy(() -> locker.tryLock("k")).isInstanceOf(LockerClosedException.class);
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void renewals_areTimed_andKeysAreTags_whenAskedFor() throws Exception {
        MicrometerLockObserver observer =
                MicrometerLockObserver.builder(meters).keyTag(true).build();
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("memory://metrics-renewals")
                .leaseTime(Duration.ofMillis(300))
                .observer(observer)
                .build()) {
            RemoteLock lock = locker.lock("orders", WAIT);
            long end = System.nanoTime() + WAIT.toNanos();
            while (meters.find(MicrometerLockObserver.RENEW).timer() == null && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            lock.release();
        }
        assertThat(meters.get(MicrometerLockObserver.RENEW)
                        .tags("store", "memory", "key", "orders", "outcome", "renewed")
                        .timer()
                        .count())
                .isPositive();
        assertThat(meters.get(MicrometerLockObserver.ACQUIRE)
                        .tags("key", "orders", "outcome", "granted")
                        .timer()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void acquisitions_areObservations_forTracing() throws Exception {
        TestObservationRegistry observations = TestObservationRegistry.create();
        MicrometerLockObserver observer = MicrometerLockObserver.builder(meters)
                .observations(observations)
                .build();
        try (RemoteLocker locker = zk(observer);
                RemoteLocker other = zk(observer)) {
            RemoteLock held = locker.lock("traced", WAIT);
            assertThatThrownBy(() -> other.lock("traced", Duration.ofMillis(100)))
                    .isInstanceOf(LockTimeoutException.class);
            held.release();
        }
        TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsWithNameEqualTo(MicrometerLockObserver.ACQUISITION_OBSERVATION, 2)
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "granted")
                        .hasLowCardinalityKeyValue("store", "zk")
                        .hasHighCardinalityKeyValue("key", "traced")
                        .doesNotHaveError())
                .hasAnObservation(
                        o -> o.hasLowCardinalityKeyValue("outcome", "timed_out").hasError());
    }

    private List<String> snapshot() {
        return meters.getMeters().stream()
                .map(m -> m.getId() + "=" + measure(m))
                .sorted()
                .toList();
    }

    private static String measure(Meter m) {
        StringBuilder text = new StringBuilder();
        m.measure().forEach(x -> text.append(x.getStatistic())
                .append(':')
                .append(x.getValue())
                .append(' '));
        return text.toString();
    }

    @Test
    void storeRequests_countEveryLockersRequests_afterAGarbageCollection() throws Exception {
        MicrometerLockObserver observer = MicrometerLockObserver.create(meters);
        try (RemoteLocker first = zk(observer);
                RemoteLocker second = zk(observer)) {
            collectGarbage(); // Micrometer holds a function counter's state weakly
            double before = storeRequests();
            first.tryLock("requests-first").orElseThrow().release();
            double afterFirst = storeRequests();
            assertThat(afterFirst).as("the first locker's requests").isGreaterThan(before);
            second.tryLock("requests-second").orElseThrow().release();
            assertThat(storeRequests()).as("the second locker's requests").isGreaterThan(afterFirst);
        }
    }

    @Test
    void storeRequests_ofAClosedLocker_stayCounted_andItsCountIsLetGo() throws Exception {
        MicrometerLockObserver metrics = MicrometerLockObserver.create(meters);
        List<WeakReference<LongSupplier>> given = new CopyOnWriteArrayList<>();
        LockObserver watching = new LockObserver() { // what the locker gives the observer, watched for its collection
                    @Override
                    public void lockerOpened(String scheme, Optional<LongSupplier> storeRequests) {
                        storeRequests.ifPresent(count -> given.add(new WeakReference<>(count)));
                        metrics.lockerOpened(scheme, storeRequests);
                    }

                    @Override
                    public void lockerClosed(String scheme, Optional<LongSupplier> storeRequests) {
                        metrics.lockerClosed(scheme, storeRequests);
                    }

                    @Override
                    public Acquisition acquisitionStarted(String scheme, String key, Kind kind) {
                        return metrics.acquisitionStarted(scheme, key, kind);
                    }
                };
        try (RemoteLocker locker = RemoteLockers.builder()
                .uri("zk://" + ZK.connectString() + "/metrics")
                .observer(watching)
                .build()) {
            locker.tryLock("requests-closed").orElseThrow().release();
        }
        double atClose = storeRequests();
        assertThat(atClose).as("the closed locker's requests").isPositive();
        assertThat(given).hasSize(1);
        long end = System.nanoTime() + WAIT.toNanos();
        while (given.get(0).get() != null) {
            assertThat(System.nanoTime() - end)
                    .as("the closed locker's request count (it reaches the backend) let go")
                    .isNegative();
            System.gc();
            Thread.sleep(10);
        }
        assertThat(storeRequests())
                .as("the closed locker's requests, still counted")
                .isEqualTo(atClose);
    }

    private double storeRequests() {
        return meters.get(MicrometerLockObserver.STORE_REQUESTS)
                .tag("store", "zk")
                .functionCounter()
                .count();
    }

    /** Runs the collector until an object only weakly reachable is gone. */
    private static void collectGarbage() throws InterruptedException {
        WeakReference<Object> sentinel = new WeakReference<>(new Object());
        long end = System.nanoTime() + WAIT.toNanos();
        while (sentinel.get() != null) {
            assertThat(System.nanoTime() - end).as("the collector ran").isNegative();
            System.gc();
            Thread.sleep(10);
        }
    }
}
