package io.distlock.kit.selftest;

import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.OptionalLong;

/** Broken: declares fencing but hands out tokens that fall with every acquisition. */
public final class DecreasingTokensProvider extends BrokenProvider {

    /** For the service loader. */
    public DecreasingTokensProvider() {
        super("broken-fencing");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new Forwarding(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(r).map(Falling::new);
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(r, d).map(Falling::new);
            }

            @Override
            public boolean renew(Lease lease) {
                return correct.renew(((Falling) lease).inner);
            }

            @Override
            public void release(Lease lease) {
                correct.release(((Falling) lease).inner);
            }
        };
    }

    private record Falling(Lease inner) implements Lease {
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
            return OptionalLong.of(1_000_000_000L - inner.fencingToken().orElseThrow());
        }

        @Override
        public long validUntilNanos() {
            return inner.validUntilNanos();
        }
    }
}
