package io.distlock.memory;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/** A locker's view of one {@link LockSpace}; stateless besides its ticker. */
final class MemoryLockBackend implements LockBackend {

    private static final Capabilities CAPABILITIES = new Capabilities(true, true, true, LeaseModel.RENEWED_TTL)
            .with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT)
            .with(
                    Capabilities.Operation.INSPECT,
                    Capabilities.Operation.BREAK,
                    Capabilities.Operation.LOCK_DELAY,
                    Capabilities.Operation.REQUEST_RELEASE);

    private final LockSpace space;
    private final Ticker ticker;
    private final Clock clock;
    /** The locker's lock-delay: how long an unreleased grant's entry outlives its validity. */
    private final long delayNanos;

    MemoryLockBackend(LockSpace space, Ticker ticker, Clock clock, Duration lockDelay) {
        this.space = space;
        this.ticker = ticker;
        this.clock = clock;
        this.delayNanos = lockDelay.toNanos();
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        return space.tryAcquire(request, ticker, delayNanos).map(Lease.class::cast);
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return space.acquire(request, ticker, delayNanos, deadline).map(Lease.class::cast);
    }

    /** Native: a waiter is a future in the key's queue, completed by the release before it; no thread is held. */
    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        CompletableFuture<Optional<MemoryLease>> inSpace = space.acquireAsync(request, ticker, delayNanos, deadline);
        CompletableFuture<Optional<Lease>> result = inSpace.thenApply(lease -> lease.map(Lease.class::cast));
        result.whenComplete((lease, failure) -> {
            if (result.isCancelled() && !inSpace.cancel(false)) {
                inSpace.getNow(Optional.empty()).ifPresent(space::release); // granted just before the cancel
            }
        });
        return result;
    }

    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        MemoryLease ours = (MemoryLease) lease;
        return space.renew(ours, ticker, leaseTime.toNanos())
                ? OptionalLong.of(ours.validUntilNanos())
                : OptionalLong.empty();
    }

    @Override
    public boolean release(Lease lease) {
        return space.release((MemoryLease) lease);
    }

    @Override
    public LockState inspect(String key) {
        return space.inspect(key, clock);
    }

    @Override
    public List<LockState> listHeld() {
        return space.listHeld(clock);
    }

    /** The holders learn at their next renewal, as after an entry deleted from a store by hand. */
    @Override
    public List<LockHolder> breakLock(String key) {
        return space.breakLock(key, clock);
    }

    /** The holders hear it at once, in this process: the space calls their lockers' listeners. */
    @Override
    public List<LockHolder> requestRelease(String key) {
        return space.requestRelease(key, clock);
    }

    @Override
    public void close() {
        // The space outlives this view: other lockers of the process may use it.
    }
}
