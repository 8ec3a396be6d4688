package io.distlock.kit.selftest;

import io.distlock.LockKind;
import io.distlock.kit.ForwardingBackend;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;

/** Broken: writers share. A write request is served as a read request, so a writer gets in beside the readers. */
public final class WriterBesideReadersProvider extends BrokenProvider {

    /** For the service loader. */
    public WriterBesideReadersProvider() {
        super("broken-writerbesidereaders");
    }

    @Override
    LockBackend breakIt(LockBackend correct, BackendConfig config) {
        return new ForwardingBackend(correct) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest r) {
                return correct.tryAcquire(asRead(r));
            }

            @Override
            public Optional<Lease> acquire(LockRequest r, Deadline d) throws InterruptedException {
                return correct.acquire(asRead(r), d);
            }
        };
    }

    private static LockRequest asRead(LockRequest r) {
        return r.kind() != LockKind.WRITE
                ? r
                : new LockRequest(
                        r.key(), r.ownerId(), r.leaseTime(), r.lossListener(), LockKind.READ, LockRequest.UNBOUNDED);
    }
}
