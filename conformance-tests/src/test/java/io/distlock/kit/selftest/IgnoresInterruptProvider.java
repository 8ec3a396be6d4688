package io.distlock.kit.selftest;

import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;

/** Broken: an interrupted blocking acquire swallows the interrupt and returns empty, as if it had timed out. */
public final class IgnoresInterruptProvider extends BrokenProvider {

    /** For the service loader. */
    public IgnoresInterruptProvider() {
        super("broken-ignoresinterrupt");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) {
                try {
                    return correct.acquire(r, d);
                } catch (InterruptedException e) {
                    return Optional.empty(); // the defect
                }
            }
        };
    }
}
