package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Broken: violates Theorem 4 like the seed's old shadow-table algorithm without its retry. Each tryLock announces
 * itself, waits a moment as a store round trip would, and gives up if any other attempt on the key was announced
 * meanwhile: simultaneous attempts all fail.
 */
public final class ContendedTryLockProvider extends BrokenProvider {

    private static final Map<String, Set<Object>> ATTEMPTS = new ConcurrentHashMap<>();

    /** For the service loader. */
    public ContendedTryLockProvider() {
        super("broken-trylock");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                Set<Object> attempts = ATTEMPTS.computeIfAbsent(r.key(), k -> ConcurrentHashMap.newKeySet());
                Object me = new Object();
                attempts.add(me);
                boolean alone = true;
                try {
                    long end = System.nanoTime() + 5_000_000;
                    while (System.nanoTime() < end) {
                        alone &= attempts.size() == 1;
                        Thread.sleep(1);
                    }
                    alone &= attempts.size() == 1;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    alone = false;
                } finally {
                    attempts.remove(me);
                }
                return alone ? correct.tryAcquire(r) : Optional.empty();
            }
        };
    }
}
