package io.distlock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockKind;
import io.distlock.kit.TestTimeouts;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.Engine;
import io.distlock.lockctl.bench.Failover;
import io.distlock.lockctl.bench.Targets;
import io.distlock.lockctl.bench.Workload;
import io.distlock.testing.EtcdCluster;
import io.distlock.testing.RedisServers;
import io.distlock.testing.ZooKeeperEnsemble;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Every peer against its real store: two clients on one key exclude each other, and the floors count requests. */
class PeersTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(3).build();

    @RegisterExtension
    static final EtcdCluster ETCD = EtcdCluster.builder().members(1).build();

    @RegisterExtension
    static final ZooKeeperEnsemble ZK = ZooKeeperEnsemble.builder().servers(1).build();

    private static final int PER_CLIENT = 25;
    /** The failover tests' session timeout and lease time: short, so that a killed leader's runs out soon. */
    private static final Duration TTL = Duration.ofSeconds(3);
    /** Beyond the ttl: the server's tick or lease check, the watch, the listener, a loaded machine. */
    private static final Duration FAILOVER_SLACK = TestTimeouts.scaled(Duration.ofSeconds(2));

    @Test
    void curator_twoClients_excludeEachOther() throws Exception {
        assertExcludes("peer:curator://" + ZK.connectString() + "/peers");
    }

    @Test
    void redisson_twoClients_excludeEachOther() throws Exception {
        assertExcludes("peer:redisson://" + REDIS.endpoints().get(0));
    }

    @Test
    void redissonTryLock_twoClients_excludeEachOther() throws Exception {
        assertExcludes("peer:redisson://" + REDIS.endpoints().get(0) + "?acquire=tryLock");
    }

    @Test
    void redissonRedLockTryLock_twoClients_excludeEachOther() throws Exception {
        assertExcludes("peer:redisson-redlock://" + String.join(",", REDIS.endpoints()) + "?acquire=tryLock");
    }

    /** A held lock's key has the 30 s lease {@code tryLock} asked for; a {@code tryLock} that returns false fails. */
    @Test
    void redissonTryLock_heldLock_leaseOfThirtySeconds_aWaitThatRunsOutFailsLoudly() throws Exception {
        String key = "try-lock-" + System.nanoTime();
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + REDIS.endpoints().get(0));
        RedissonClient other = Redisson.create(config);
        try (BenchTarget target =
                Targets.open("peer:redisson://" + REDIS.endpoints().get(0) + "?acquire=tryLock")) {
            BenchTarget.Held held = target.acquire(key);
            long ttl = other.getLock(key).remainTimeToLive();
            assertThat(ttl).as("ms left of the lease").isBetween(20_000L, 30_000L);
            assertThatThrownBy(() -> RedissonPeer.tryLock(other.getLock(key), key, Duration.ofMillis(200)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("tryLock(200 ms, 30 s) on '" + key + "' returned false");
            held.release();
            assertThat(other.getLock(key).isLocked()).as("released").isFalse();
        } finally {
            other.shutdown();
        }
    }

    /** Through tryLock(wait, leaseTime) the read-write lock's sides share and exclude; its semaphore is refused. */
    @Test
    void redissonTryLockReadWriteLock_readsShare_aWriteExcludes_theSemaphoreIsRefusedByName() throws Exception {
        String spec = "peer:redisson://" + REDIS.endpoints().get(0) + "?acquire=tryLock";
        assertSharesAndExcludes(spec, false);
        try (BenchTarget target = Targets.open(spec)) {
            assertThatThrownBy(() -> target.acquire("s-" + System.nanoTime(), LockKind.PERMIT, 4))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("acquire=tryLock applies to locks and read-write locks");
        }
    }

    @Test
    void redissonSpec_unknownOptionOrAcquireValue_isRefusedNamingIt() {
        String redis = REDIS.endpoints().get(0);
        assertThatThrownBy(() -> Targets.open("peer:redisson://" + redis + "?aquire=tryLock"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unknown option [aquire] for peer:redisson; known options: [acquire]");
        assertThatThrownBy(() -> Targets.open("peer:redisson-redlock://" + redis + "?acquire=trylock"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "Option 'acquire' of peer:redisson-redlock must be one of [lock, tryLock], got" + " 'trylock'");
    }

    @Test
    void redissonRedLock_twoClients_excludeEachOther() throws Exception {
        assertExcludes("peer:redisson-redlock://" + String.join(",", REDIS.endpoints()));
    }

    @Test
    void jetcdLock_twoClients_excludeEachOther() throws Exception {
        assertExcludes("peer:jetcd-lock://" + etcd());
    }

    @Test
    void etcdTxnFloor_twoClients_excludeEachOther_andCountRequests() throws Exception {
        assertExcludes("peer:etcd-txn://" + etcd());
        assertCountsTwoRequestsPerFreeAcquisition("peer:etcd-txn://" + etcd());
    }

    @Test
    void etcdQueueFloor_twoClients_excludeEachOther_andCountRequests() throws Exception {
        assertExcludes("peer:etcd-queue://" + etcd());
        assertCountsTwoRequestsPerFreeAcquisition("peer:etcd-queue://" + etcd());
    }

    @Test
    void redisFloor_oneMaster_excludes_andCountsRequests() throws Exception {
        assertExcludes("peer:redis-setnx://" + REDIS.endpoints().get(0));
        assertCountsTwoRequestsPerFreeAcquisition(
                "peer:redis-setnx://" + REDIS.endpoints().get(0));
    }

    @Test
    void redisFloor_threeMasters_excludes_andCountsEveryMaster() throws Exception {
        String spec = "peer:redis-setnx://" + String.join(",", REDIS.endpoints());
        assertExcludes(spec);
        try (BenchTarget target = Targets.open(spec)) {
            target.acquire("counted").release();
            assertThat(target.storeRequests()).hasValue(6);
        }
    }

    /** The peers that let {@code lockctl bench --threads} share one target: its threads exclude each other. */
    @Test
    void peersSharedByThreads_twoThreadsOfOneTarget_excludeEachOther() throws Exception {
        for (String spec : List.of(
                "peer:curator://" + ZK.connectString() + "/peers",
                "peer:redisson://" + REDIS.endpoints().get(0),
                "peer:redisson://" + REDIS.endpoints().get(0) + "?acquire=tryLock",
                "peer:redisson-redlock://" + String.join(",", REDIS.endpoints()),
                "peer:etcd-txn://" + etcd(),
                "peer:redis-setnx://" + String.join(",", REDIS.endpoints()))) {
            assertThat(Targets.sharedByThreads(spec)).as(spec).isTrue();
            assertExcludes(spec, 1);
        }
    }

    /** jetcd's Lock service and the queue floor name their key after the client's one lease: not for two threads. */
    @Test
    void peersKeyedByTheirLease_areNotSharedByThreads_distlockLockersAre() {
        assertThat(Targets.sharedByThreads("peer:jetcd-lock://" + etcd())).isFalse();
        assertThat(Targets.sharedByThreads("peer:etcd-queue://" + etcd())).isFalse();
        assertThat(Targets.sharedByThreads("etcd://" + etcd() + "/bench")).isTrue();
    }

    @Test
    void curatorReadWriteLockAndSemaphore_readsAndPermitsShare_writesAndTheFifthPermitWait() throws Exception {
        assertSharesAndExcludes("peer:curator://" + ZK.connectString() + "/peers");
    }

    @Test
    void redissonReadWriteLockAndSemaphore_readsAndPermitsShare_writesAndTheFifthPermitWait() throws Exception {
        assertSharesAndExcludes("peer:redisson://" + REDIS.endpoints().get(0));
    }

    /** Failover on distlock's ZooKeeper election beside Curator's LeaderLatch, one round of each kind, side by side. */
    @Test
    void curatorLeaderLatch_failoverBesideDistlock_handsOverOnStepDownAndWithinTheSessionOnKill(@TempDir Path dir)
            throws Exception {
        List<String> stores = List.of(
                "zk://" + ZK.connectString() + "/failover?ttl=" + TTL.toSeconds() + "s",
                "peer:curator-leader-latch://" + ZK.connectString() + "/failover?ttl=" + TTL.toSeconds() + "s");
        List<Failover.Run> runs = failover(dir, stores);

        assertPlausible(runs, stores);
        List<Failover.Summary> summaries = Failover.summarize(stores, runs);
        assertThat(summaries).hasSize(4);
        assertThat(summaries).filteredOn(f -> f.storeIndex() == 1).allSatisfy(f -> assertThat(f.ratio())
                .isPositive());
    }

    @Test
    void jetcdElection_failover_handsOverOnStepDownAndWithinTheLeaseOnKill(@TempDir Path dir) throws Exception {
        List<String> stores = List.of("peer:jetcd-election://" + etcd() + "?ttl=" + TTL.toSeconds() + "s");
        assertPlausible(failover(dir, stores), stores);
    }

    /** A lock peer has no election; an election peer no lock: each is refused by name. */
    @Test
    void peers_askedForAWorkloadTheyCannotRun_areRefusedByName() throws Exception {
        try (BenchTarget lock = Targets.open("peer:curator://" + ZK.connectString() + "/peers")) {
            assertThatThrownBy(() -> lock.join("e", "a", () -> {}))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("cannot run --workload failover")
                    .hasMessageContaining("peer:curator-leader-latch");
        }
        try (BenchTarget latch = Targets.open("peer:curator-leader-latch://" + ZK.connectString() + "/peers")) {
            assertThatThrownBy(() -> latch.acquire("k"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("runs --workload failover only");
        }
        try (BenchTarget election = Targets.open("peer:jetcd-election://" + etcd())) {
            assertThatThrownBy(() -> election.acquire("k", LockKind.READ, 1))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("runs --workload failover only");
        }
    }

    /** One step-down and one kill per store, three candidate JVMs each, one warm-up step-down. */
    private static List<Failover.Run> failover(Path dir, List<String> stores) throws Exception {
        return new Engine(dir, 1, 1, 0, 1, 0, false, Workload.FAILOVER).failover(stores, 1, 3, done -> {});
    }

    /**
     * Every store had a step-down and a kill; each handed over to another candidate; a step-down well within the ttl,
     * a kill no sooner than half of it (the killed leader's session or lease had to run out) and no later than the ttl
     * and some slack.
     */
    private static void assertPlausible(List<Failover.Run> runs, List<String> stores) {
        assertThat(runs).hasSize(2 * stores.size());
        for (Failover.Run r : runs) {
            assertThat(r.to()).as("%s", r).isNotEqualTo(r.from());
            if (r.kind().equals(Failover.KILL)) {
                assertThat(r.millis()).as("%s", r).isBetween(TTL.toMillis() / 2.0, (double)
                        TTL.plus(FAILOVER_SLACK).toMillis());
            } else {
                assertThat(r.millis()).as("%s", r).isBetween(0.0, TTL.toMillis() / 2.0);
            }
        }
    }

    @Test
    void unknownPeer_isRejectedWithThePeersAvailable() {
        assertThatThrownBy(() -> Targets.open("peer:nosuch://h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("peer:curator://")
                .hasMessageContaining("peer:redis-setnx://");
    }

    private static String etcd() {
        return ETCD.clientEndpoints().get(0).substring("http://".length());
    }

    /** Two clients each take the key {@value #PER_CLIENT} times around a read-pause-write of a plain counter. */
    private static void assertExcludes(String spec) throws Exception {
        assertExcludes(spec, 2);
    }

    /**
     * Two threads each take the key {@value #PER_CLIENT} times around a read-pause-write of a plain counter, each on a
     * target of its own ({@code targets} 2) or both on one ({@code targets} 1).
     */
    private static void assertExcludes(String spec, int targets) throws Exception {
        String key = "exclusion-" + System.nanoTime();
        int[] counter = {0};
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<BenchTarget> opened = new ArrayList<>();
        try {
            for (int t = 0; t < targets; t++) {
                opened.add(Targets.open(spec));
            }
            List<Future<?>> done = new ArrayList<>();
            for (int thread = 0; thread < 2; thread++) {
                BenchTarget target = opened.get(thread % targets);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < PER_CLIENT; i++) {
                        BenchTarget.Held held = target.acquire(key);
                        int read = counter[0];
                        LockSupport.parkNanos(200_000); // widen the window a lost exclusion would show in
                        counter[0] = read + 1;
                        held.release();
                    }
                    return null;
                }));
            }
            Duration limit = TestTimeouts.scaled(Duration.ofSeconds(60));
            for (Future<?> f : done) {
                f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            }
            synchronized (counter) {
                assertThat(counter[0])
                        .as(spec + " on " + targets + " target(s)")
                        .isEqualTo(2 * PER_CLIENT);
            }
        } finally {
            pool.shutdownNow();
            for (BenchTarget target : opened) {
                target.close();
            }
        }
    }

    /**
     * On three clients of {@code spec}: three reads held at once; a read waits while a write is held and is granted
     * once it is released; four permits of a semaphore of 4 held at once, the fifth waits until one is given back.
     * Each hold is taken and released on one thread of its own (Curator's and Redisson's locks belong to a thread).
     */
    private static void assertSharesAndExcludes(String spec) throws Exception {
        assertSharesAndExcludes(spec, true);
    }

    /** {@link #assertSharesAndExcludes(String)}, the semaphore's part only if {@code semaphore}. */
    private static void assertSharesAndExcludes(String spec, boolean semaphore) throws Exception {
        String key = "kinds-" + System.nanoTime();
        Duration limit = TestTimeouts.scaled(Duration.ofSeconds(30));
        ExecutorService pool = Executors.newCachedThreadPool();
        List<BenchTarget> clients = new ArrayList<>();
        try {
            for (int c = 0; c < 3; c++) {
                clients.add(Targets.open(spec));
            }
            List<Holder> reads = new ArrayList<>();
            for (BenchTarget client : clients) {
                reads.add(new Holder(pool, client, key, LockKind.READ, 1));
            }
            for (Holder read : reads) {
                assertThat(read.granted.await(limit.toMillis(), TimeUnit.MILLISECONDS))
                        .as(spec + ": three reads held at once")
                        .isTrue();
            }
            reads.forEach(Holder::release);

            Holder write = new Holder(pool, clients.get(0), key, LockKind.WRITE, 1);
            assertThat(write.granted.await(limit.toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            Holder read = new Holder(pool, clients.get(1), key, LockKind.READ, 1);
            assertThat(read.granted.await(300, TimeUnit.MILLISECONDS))
                    .as(spec + ": a read granted beside a write")
                    .isFalse();
            write.release();
            assertThat(read.granted.await(limit.toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            read.release();
            read.done.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            if (!semaphore) {
                return;
            }

            String semaphoreKey = key + "-semaphore";
            List<Holder> permits = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                permits.add(new Holder(pool, clients.get(i % 3), semaphoreKey, LockKind.PERMIT, 4));
            }
            for (Holder permit : permits) {
                assertThat(permit.granted.await(limit.toMillis(), TimeUnit.MILLISECONDS))
                        .as(spec + ": four permits of 4 held at once")
                        .isTrue();
            }
            Holder fifth = new Holder(pool, clients.get(1), semaphoreKey, LockKind.PERMIT, 4);
            assertThat(fifth.granted.await(300, TimeUnit.MILLISECONDS))
                    .as(spec + ": a fifth permit of 4 granted")
                    .isFalse();
            permits.get(0).release();
            assertThat(fifth.granted.await(limit.toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            fifth.release();
            for (Holder h : permits.subList(1, 4)) {
                h.release();
            }
            for (Holder h : permits) {
                h.done.get(limit.toMillis(), TimeUnit.MILLISECONDS); // every release succeeded
            }
        } finally {
            pool.shutdownNow();
            for (BenchTarget client : clients) {
                client.close();
            }
        }
    }

    /** One hold on a thread of its own: taken at once, released (on that thread) when told. */
    private static final class Holder {
        final CountDownLatch granted = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Future<?> done;

        Holder(ExecutorService pool, BenchTarget client, String key, LockKind kind, int permits) {
            done = pool.submit(() -> {
                BenchTarget.Held held = client.acquire(key, kind, permits);
                granted.countDown();
                release.await();
                held.release();
                return null;
            });
        }

        void release() {
            release.countDown();
        }
    }

    private static void assertCountsTwoRequestsPerFreeAcquisition(String spec) throws Exception {
        try (BenchTarget target = Targets.open(spec)) {
            long before = target.storeRequests().orElseThrow();
            for (int i = 0; i < 5; i++) {
                target.acquire("counted-" + i).release();
            }
            assertThat(target.storeRequests().orElseThrow() - before).isEqualTo(10);
        }
    }
}
