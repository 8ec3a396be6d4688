package io.distlock.benchmarks;

import io.distlock.LockKind;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryOneTime;

/**
 * Curator's {@code InterProcessMutex}: {@code peer:curator://h:2181[,h:2181...]/basePath}. The lock of key {@code k}
 * is {@code /basePath/<k percent-encoded>}, the layout distlock's ZooKeeper backend uses. The read-write workload takes
 * the sides of Curator's {@code InterProcessReadWriteLock} on {@code /basePath/rw/<k>}, the semaphore workload a lease
 * of its {@code InterProcessSemaphoreV2} of P leases on {@code /basePath/semaphore/<k>}.
 */
public final class CuratorPeer implements BenchTargetFactory {

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "curator");
    }

    @Override
    public BenchTarget open(String spec) throws InterruptedException {
        PeerSpec peer = PeerSpec.parse(spec, 2181);
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                String.join(",", peer.hosts()), 30_000, 10_000, new RetryOneTime(100));
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("Cannot reach ZooKeeper at " + peer.hosts() + " within 10 s");
        }
        String base = "/" + (peer.path().isEmpty() ? "curator" : peer.path());
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

    private static String encode(String key) {
        return URLEncoder.encode(key, StandardCharsets.UTF_8);
    }

    /** {@code InterProcessMutex} is held by the thread that acquired it; other threads of the process wait. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return "peer:curator://h:2181/base (Curator InterProcessMutex; InterProcessReadWriteLock,"
                + " InterProcessSemaphoreV2 in the read-heavy and semaphore workloads)";
    }
}
