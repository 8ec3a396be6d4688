package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;

/** Broken: a blocking acquire waits at most 50 ms, then returns empty, whatever its deadline. */
public final class GivesUpEarlyProvider extends BrokenProvider {

    private static final Duration PATIENCE = Duration.ofMillis(50);

    /** For the service loader. */
    public GivesUpEarlyProvider() {
        super("broken-givesupearly");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(r, Deadline.after(PATIENCE, config.ticker()));
            }
        };
    }
}
