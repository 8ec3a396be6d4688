package io.distlock.benchmarks;

import io.distlock.LockKind;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's locks: {@code peer:redisson://h:6379} (an {@code RLock} on one server) and {@code
 * peer:redisson-redlock://h1:6379,h2:6379,h3:6379} (a {@code RedissonRedLock} over one client per master). On one
 * server, the read-write workload takes the sides of an {@code RReadWriteLock} and the semaphore workload a permit of
 * an {@code RPermitExpirableSemaphore} of P permits (set once per key with {@code trySetPermits}, acquired without a
 * lease time: held until released, as a lock renewed by Redisson's watchdog is).
 */
public final class RedissonPeer implements BenchTargetFactory {

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "redisson") || PeerSpec.names(spec, "redisson-redlock");
    }

    @Override
    public BenchTarget open(String spec) {
        PeerSpec peer = PeerSpec.parse(spec, 6379);
        boolean redlock = peer.name().equals("redisson-redlock");
        List<RedissonClient> clients = new ArrayList<>();
        for (String host : redlock ? peer.hosts() : peer.hosts().subList(0, 1)) {
            Config config = new Config();
            config.useSingleServer().setAddress("redis://" + host).setConnectionMinimumIdleSize(1);
            clients.add(Redisson.create(config));
        }
        Set<String> semaphoresSet = ConcurrentHashMap.newKeySet();
        return new BenchTarget() {
            @Override
            public Held acquire(String key, LockKind kind, int permits) throws InterruptedException {
                if (kind == LockKind.LOCK) {
                    return acquire(key);
                }
                if (redlock) {
                    throw new UnsupportedOperationException(
                            "peer:redisson-redlock measures locks only; measure Redisson's read-write lock and"
                                    + " semaphore with peer:redisson://h:6379");
                }
                RedissonClient client = clients.get(0);
                switch (kind) {
                    case READ, WRITE -> {
                        RLock side = kind == LockKind.READ
                                ? client.getReadWriteLock(key).readLock()
                                : client.getReadWriteLock(key).writeLock();
                        side.lock();
                        return side::unlock;
                    }
                    default -> {
                        RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore(key);
                        if (semaphoresSet.add(key)) {
                            semaphore.trySetPermits(permits);
                        }
                        String permit = semaphore.acquire();
                        return () -> semaphore.release(permit);
                    }
                }
            }

            @Override
            public Held acquire(String key) {
                RLock lock;
                if (redlock) {
                    RLock[] locks = clients.stream().map(c -> c.getLock(key)).toArray(RLock[]::new);
                    lock = new RedissonRedLock(locks);
                } else {
                    lock = clients.get(0).getLock(key);
                }
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                clients.forEach(RedissonClient::shutdown);
            }
        };
    }

    /** An {@code RLock} is held by the thread that locked it; other threads of the process wait. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return "peer:redisson://h:6379 (Redisson RLock; RReadWriteLock, RPermitExpirableSemaphore in the read-heavy"
                + " and semaphore workloads), peer:redisson-redlock://h1,h2,h3 (RedissonRedLock)";
    }
}
