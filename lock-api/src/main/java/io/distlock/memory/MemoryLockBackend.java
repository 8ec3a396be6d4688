package io.distlock.memory;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;

/** A locker's view of one {@link LockSpace}; stateless besides its ticker. */
final class MemoryLockBackend implements LockBackend {

    private static final Capabilities CAPABILITIES = new Capabilities(true, true, true, LeaseModel.RENEWED_TTL);

    private final LockSpace space;
    private final Ticker ticker;

    MemoryLockBackend(LockSpace space, Ticker ticker) {
        this.space = space;
        this.ticker = ticker;
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        return space.tryAcquire(request, ticker).map(Lease.class::cast);
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return space.acquire(request, ticker, deadline).map(Lease.class::cast);
    }

    @Override
    public boolean renew(Lease lease) {
        return space.renew((MemoryLease) lease, ticker);
    }

    @Override
    public void release(Lease lease) {
        space.release((MemoryLease) lease);
    }

    @Override
    public void close() {
        // The space outlives this view: other lockers of the process may use it.
    }
}
