package io.distlock.benchmarks;

import io.distlock.LockKind;
import io.distlock.lockctl.bench.BenchTarget;
import io.distlock.lockctl.bench.BenchTargetFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>The option {@code acquire} says through which call a lock or a read-write side is taken: {@code lock} (the
 * default: {@code lock()}, a lease renewed by Redisson's watchdog) or {@code tryLock} ({@code tryLock(60 s, 30 s)}: a
 * 30 s lease without renewal, a wait long enough never to run out in a benchmark; a {@code false} fails the
 * acquisition loudly rather than measuring a lock not taken).
 */
public final class RedissonPeer implements BenchTargetFactory {

    /** The spec option naming the call that takes a lock. */
    static final String ACQUIRE = "acquire";

    static final String LOCK = "lock";
    static final String TRY_LOCK = "tryLock";

    /** {@code tryLock}'s wait: long enough never to run out in a benchmark. */
    static final Duration TRY_LOCK_WAIT = Duration.ofSeconds(60);

    /** {@code tryLock}'s lease time, not renewed: longer than any hold of a benchmark. */
    static final Duration TRY_LOCK_LEASE = Duration.ofSeconds(30);

    @Override
    public boolean supports(String spec) {
        return PeerSpec.names(spec, "redisson") || PeerSpec.names(spec, "redisson-redlock");
    }

    @Override
    public BenchTarget open(String spec) {
        PeerSpec peer = PeerSpec.parse(spec, 6379).requireOnly(Set.of(ACQUIRE));
        boolean tryLock = peer.choice(ACQUIRE, List.of(LOCK, TRY_LOCK), LOCK).equals(TRY_LOCK);
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
                        take(side, key, tryLock);
                        return side::unlock;
                    }
                    default -> {
                        if (tryLock) {
                            throw new UnsupportedOperationException("peer:redisson's acquire=tryLock applies to locks"
                                    + " and read-write locks; measure its semaphore without the option");
                        }
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
            public Held acquire(String key) throws InterruptedException {
                RLock lock;
                if (redlock) {
                    RLock[] locks = clients.stream().map(c -> c.getLock(key)).toArray(RLock[]::new);
                    lock = new RedissonRedLock(locks);
                } else {
                    lock = clients.get(0).getLock(key);
                }
                take(lock, key, tryLock);
                return lock::unlock;
            }

            @Override
            public void close() {
                clients.forEach(RedissonClient::shutdown);
            }
        };
    }

    /** Takes {@code lock} through {@code lock()}, or {@code tryLock(wait, leaseTime)}, failing if that returns false. */
    private static void take(RLock lock, String key, boolean tryLock) throws InterruptedException {
        if (tryLock) {
            tryLock(lock, key, TRY_LOCK_WAIT);
        } else {
            lock.lock();
        }
    }

    /**
     * {@code lock.tryLock(wait, 30 s)}.
     *
     * @throws IllegalStateException if it returns false (it waited {@code wait} without the lock), naming the key
     */
    static void tryLock(RLock lock, String key, Duration wait) throws InterruptedException {
        if (!lock.tryLock(wait.toMillis(), TRY_LOCK_LEASE.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("Redisson's tryLock(" + wait.toMillis() + " ms, "
                    + TRY_LOCK_LEASE.toSeconds() + " s) on '" + key + "' returned false: it waited without getting"
                    + " the lock; a benchmark's wait must never run out, so this run measures nothing");
        }
    }

    /** An {@code RLock} is held by the thread that locked it; other threads of the process wait. */
    @Override
    public boolean sharedByThreads(String spec) {
        return true;
    }

    @Override
    public String describe() {
        return "peer:redisson://h:6379[?acquire=tryLock] (Redisson RLock through lock() or tryLock(60 s, 30 s); RReadWriteLock, RPermitExpirableSemaphore in the read-heavy"
                + " and semaphore workloads), peer:redisson-redlock://h1,h2,h3 (RedissonRedLock)";
    }
}
