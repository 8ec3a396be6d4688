package io.distlock.kit;

import io.distlock.Capabilities;
import io.distlock.LockHolder;
import io.distlock.LockState;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A backend that passes its calls to another one: the base of a wrapper that watches or changes a few calls of a
 * backend, to stage a fault in a test or to break a promise on purpose and see the kit catch it. The kit wraps the
 * backend under test with it; tests of tools built on the kit use it for their own staged stores.
 *
 * <p>{@link #acquireAsync} and {@link #storeRequests} keep {@link LockBackend}'s defaults instead of forwarding: the
 * asynchronous path runs this wrapper's {@link #acquire} on the given executor, so a subclass that changes {@code
 * acquire} changes both paths at once, and no request count is reported. A subclass that wants the wrapped backend's
 * own asynchronous path or its count overrides them.
 */
public abstract class ForwardingBackend implements LockBackend {

    /** The wrapped backend, which every call not overridden goes to. */
    protected final LockBackend backend;

    /** Wraps {@code backend}. */
    protected ForwardingBackend(LockBackend backend) {
        this.backend = backend;
    }

    @Override
    public Capabilities capabilities() {
        return backend.capabilities();
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        return backend.tryAcquire(request);
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return backend.acquire(request, deadline);
    }

    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        return backend.renew(lease, leaseTime);
    }

    @Override
    public boolean release(Lease lease) {
        return backend.release(lease);
    }

    @Override
    public LockState inspect(String key) {
        return backend.inspect(key);
    }

    @Override
    public List<LockState> listHeld() {
        return backend.listHeld();
    }

    @Override
    public List<LockHolder> breakLock(String key) {
        return backend.breakLock(key);
    }

    @Override
    public List<LockHolder> requestRelease(String key) {
        return backend.requestRelease(key);
    }

    @Override
    public void close() {
        backend.close();
    }
}
