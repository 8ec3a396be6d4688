package io.distlock.internal;

import io.distlock.Capabilities;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LeaseLossListener;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The real in-memory backend with hooks around its calls: to make a reply arrive late, a renewal hang or a loss arrive
 * at a chosen moment, a wait fail, an asynchronous wait be granted on the releasing thread. Counts renewals, releases and {@link Lease#onStillHeld} calls per key; remembers each key's
 * latest loss listener.
 */
final class HookedProvider implements LockBackendProvider {

    volatile BiConsumer<io.distlock.spi.LockRequest, Deadline> beforeAcquire = (request, deadline) -> {};
    volatile Consumer<Lease> afterGrant = lease -> {};
    volatile Function<Lease, Optional<OptionalLong>> beforeRenew = lease -> Optional.empty();
    /**
     * Whether {@code acquireAsync} is the memory backend's native one (a waiter's future, completed by the release
     * before it on the releasing thread); else the SPI's default (the blocking acquire on the locker's worker).
     */
    volatile boolean nativeAsync;
    /** The thread of the latest blocking acquire, null before the first. */
    volatile Thread acquiring;

    final Map<String, AtomicInteger> renewals = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> releases = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> stillHeld = new ConcurrentHashMap<>();
    final Map<String, LeaseLossListener> lossListeners = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return "hooked-memory";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("memory");
    }

    int renewals(String key) {
        return renewals.computeIfAbsent(key, k -> new AtomicInteger()).get();
    }

    int releases(String key) {
        return releases.computeIfAbsent(key, k -> new AtomicInteger()).get();
    }

    int stillHeld(String key) {
        return stillHeld.computeIfAbsent(key, k -> new AtomicInteger()).get();
    }

    /** The memory backend's lease, counting the locker's {@link Lease#onStillHeld} calls. */
    private record Counted(Lease inner, AtomicInteger stillHeld) implements Lease {
        @Override
        public String key() {
            return inner.key();
        }

        @Override
        public String ownerId() {
            return inner.ownerId();
        }

        @Override
        public OptionalLong fencingToken() {
            return inner.fencingToken();
        }

        @Override
        public long validUntilNanos() {
            return inner.validUntilNanos();
        }

        @Override
        public void onStillHeld() {
            stillHeld.incrementAndGet();
        }
    }

    private Optional<Lease> counted(Optional<Lease> lease) {
        return lease.map(l -> new Counted(l, stillHeld.computeIfAbsent(l.key(), k -> new AtomicInteger())));
    }

    private static Lease inner(Lease lease) {
        return lease instanceof Counted c ? c.inner() : lease;
    }

    @Override
    public LockBackend open(BackendConfig config) {
        LockBackend memory = new MemoryLockBackendProvider().open(config);
        return new LockBackend() {
            @Override
            public Capabilities capabilities() {
                return memory.capabilities();
            }

            @Override
            public Optional<Lease> tryAcquire(io.distlock.spi.LockRequest request) {
                lossListeners.put(request.key(), request.lossListener());
                Optional<Lease> lease = counted(memory.tryAcquire(request));
                lease.ifPresent(afterGrant);
                return lease;
            }

            @Override
            public Optional<Lease> acquire(io.distlock.spi.LockRequest request, Deadline deadline)
                    throws InterruptedException {
                acquiring = Thread.currentThread();
                beforeAcquire.accept(request, deadline);
                lossListeners.put(request.key(), request.lossListener());
                Optional<Lease> lease = counted(memory.acquire(request, deadline));
                lease.ifPresent(afterGrant);
                return lease;
            }

            @Override
            public CompletableFuture<Optional<Lease>> acquireAsync(
                    io.distlock.spi.LockRequest request, Deadline deadline, Executor blockingExecutor) {
                return nativeAsync
                        ? memory.acquireAsync(request, deadline, blockingExecutor)
                        : LockBackend.super.acquireAsync(request, deadline, blockingExecutor);
            }

            @Override
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                renewals.computeIfAbsent(lease.key(), k -> new AtomicInteger()).incrementAndGet();
                Optional<OptionalLong> instead = beforeRenew.apply(lease);
                return instead.isPresent() ? instead.get() : memory.renew(inner(lease), leaseTime);
            }

            @Override
            public boolean release(Lease lease) {
                releases.computeIfAbsent(lease.key(), k -> new AtomicInteger()).incrementAndGet();
                return memory.release(inner(lease));
            }

            @Override
            public void close() {
                memory.close();
            }
        };
    }
}
