package io.distlock.lockctl;

import io.distlock.LockBackendException;
import io.distlock.kit.ForwardingBackend;
import io.distlock.memory.MemoryLockBackendProvider;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code losing://space}: the in-JVM store, except that renewals fail once {@link #LOSE} is set, so that a test can
 * make a held lock be lost for real (the locker's renewal finds it gone and reports the loss); and that renewals and
 * releases cannot reach the store while {@link #CUT_OFF} is set, as for a holder cut off from it, whose entry stays
 * until its lease (and a lock-delay) runs out.
 */
public final class LosingProvider implements LockBackendProvider {

    /** When set, every renewal answers "no longer yours". */
    static final AtomicBoolean LOSE = new AtomicBoolean();

    /** When set, every renewal and release fails as on a store out of reach. */
    static final AtomicBoolean CUT_OFF = new AtomicBoolean();

    /** For {@link java.util.ServiceLoader}. */
    public LosingProvider() {}

    @Override
    public String name() {
        return "losing";
    }

    @Override
    public Set<String> uriSchemes() {
        return Set.of("losing");
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return new ForwardingBackend(new MemoryLockBackendProvider().open(config)) {
            @Override
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                cutOff();
                return LOSE.get() ? OptionalLong.empty() : backend.renew(lease, leaseTime);
            }

            @Override
            public boolean release(Lease lease) {
                cutOff();
                return backend.release(lease);
            }

            private void cutOff() {
                if (CUT_OFF.get()) {
                    throw new LockBackendException("losing: cut off from the store (the test's CUT_OFF)");
                }
            }
        };
    }
}
