package io.distlock.memory;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.util.Optional;
import java.util.OptionalLong;

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
    public OptionalLong renew(Lease lease) {
        MemoryLease ours = (MemoryLease) lease;
        return space.renew(ours, ticker) ? OptionalLong.of(ours.validUntilNanos()) : OptionalLong.empty();
    }

    @Override
    public boolean release(Lease lease) {
        return space.release((MemoryLease) lease);
    }

    @Override
    public void close() {
        // The space outlives this view: other lockers of the process may use it.
    }
}
