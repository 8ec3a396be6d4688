package io.distlock.benchmarks;

import io.distlock.LockKind;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryOneTime;

/**
 * Curator's {@code InterProcessMutex}: {@code peer:curator://h:2181[,h:2181...]/basePath}; and Curator's {@code
 * LeaderLatch} for {@code --workload failover}: {@code peer:curator-leader-latch://h:2181/basePath?ttl=10s}, the
 * latches of election {@code e} on {@code /basePath/leader-latch/<e percent-encoded>}. Option {@code ttl}: the
 * session timeout (default 30 s), which the server bounds by its own minimum and maximum. The lock of key {@code k}
 * is {@code /basePath/<k percent-encoded>}, the layout distlock's ZooKeeper backend uses. The read-write workload takes
 * the sides of Curator's {@code InterProcessReadWriteLock} on {@code /basePath/rw/<k>}, the semaphore workload a lease
 * of its {@code InterProcessSemaphoreV2} of P leases on {@code /basePath/semaphore/<k>}.
 */
public final class CuratorPeer implements BenchTargetFactory {

    private static final String LEADER_LATCH = "curator-leader-latch";
    private static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(30);

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "curator") || PeerSpec.names(spec, LEADER_LATCH);
    }

    @Override
    public BenchTarget open(String spec) throws InterruptedException {
        PeerSpec peer = PeerSpec.parse(spec, 2181);
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                String.join(",", peer.hosts()),
                (int) peer.ttl(DEFAULT_SESSION_TIMEOUT).toMillis(),
                10_000,
                new RetryOneTime(100));
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("Cannot reach ZooKeeper at " + peer.hosts() + " within 10 s");
        }
        String base = "/" + (peer.path().isEmpty() ? "curator" : peer.path());
        if (peer.name().equals(LEADER_LATCH)) {
            return new LeaderLatches(client, base);
        }
        Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();
        Map<String, InterProcessReadWriteLock> readWriteLocks = new ConcurrentHashMap<>();
        Map<String, InterProcessSemaphoreV2> semaphores = new ConcurrentHashMap<>();
        return new BenchTarget() {
            @Override
            public Held acquire(String key, LockKind kind, int permits) throws Exception {
                switch (kind) {
                    case READ, WRITE -> {
                        InterProcessReadWriteLock lock = readWriteLocks.computeIfAbsent(
                                key, k -> new InterProcessReadWriteLock(client, base + "/rw/" + encode(k)));
                        InterProcessMutex side = kind == LockKind.READ ? lock.readLock() : lock.writeLock();
                        side.acquire();
                        return side::release;
                    }
                    case PERMIT -> {
                        InterProcessSemaphoreV2 semaphore = semaphores.computeIfAbsent(
                                key,
                                k -> new InterProcessSemaphoreV2(client, base + "/semaphore/" + encode(k), permits));
                        Lease lease = semaphore.acquire();
                        return lease::close;
                    }
                    default -> {
                        return acquire(key);
                    }
                }
            }

            @Override
            public Held acquire(String key) throws Exception {
                InterProcessMutex mutex =
                        mutexes.computeIfAbsent(key, k -> new InterProcessMutex(client, base + "/" + encode(k)));
                mutex.acquire();
                return mutex::release;
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /**
     * Curator's {@code LeaderLatch}, a candidate per {@link #join}: "you lead" is the latch listener's {@code
     * isLeader()}. A latch cannot queue again once closed, so a step-down closes it (its node goes) and starts a new
     * latch of the same id, which queues behind the others.
     */
    private record LeaderLatches(CuratorFramework client, String base) implements BenchTarget {
        @Override
        public Held acquire(String key) {
            throw new UnsupportedOperationException("peer:" + LEADER_LATCH + " runs --workload failover only (Curator's"
                    + " LeaderLatch); measure Curator's locks with peer:curator");
        }

        /** Every kind is refused as the lock is: this peer has no locks at all. */
        @Override
        public Held acquire(String key, LockKind kind, int permits) {
            return acquire(key);
        }

        @Override
        public Candidate join(String election, String identity, Runnable elected) throws Exception {
            String path = base + "/leader-latch/" + encode(election);
            AtomicReference<LeaderLatch> latch = new AtomicReference<>(start(path, identity, elected));
            return () -> {
                latch.get().close();
                latch.set(start(path, identity, elected));
            };
        }

        private LeaderLatch start(String path, String identity, Runnable elected) throws Exception {
            LeaderLatch latch = new LeaderLatch(client, path, identity);
            latch.addListener(new LeaderLatchListener() {
                @Override
                public void isLeader() {
                    elected.run();
                }

                @Override
                public void notLeader() {}
            });
            latch.start();
            return latch;
        }

        @Override
        public void close() {
            client.close();
        }
    }

    private static String encode(String key) {
        return URLEncoder.encode(key, StandardCharsets.UTF_8);
    }

    /** {@code InterProcessMutex} is held by the thread that acquired it; other threads of the process wait. */
    @Override
    public boolean sharedByThreads(String spec) {
        return PeerSpec.names(spec, "curator");
    }

    @Override
    public String describe() {
        return "peer:curator://h:2181/base (Curator InterProcessMutex; InterProcessReadWriteLock,"
                + " InterProcessSemaphoreV2 in the read-heavy and semaphore workloads),"
                + " peer:curator-leader-latch://h:2181/base?ttl=10s (Curator LeaderLatch, failover workload)";
    }
}
