package io.distlock.kit;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockBackendProvider;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * Wraps the provider under test to watch what the backend promises and to stage lease loss in one JVM. It records the
 * validity each grant and renewal reports (the {@link Lease#validUntilNanos()} of a grant, the value {@code renew}
 * returns), it can make renewals fail as if the store were unreachable, silence the locker as if its process had died,
 * and it can delete a granted lease behind the
 * locker's back as if the store had dropped it. Everything else goes straight to the real backend.
 */
final class InterceptingProvider implements LockBackendProvider {

    /** Told of every validity a grant or renewal reports, and of every release asked of the backend. */
    @FunctionalInterface
    interface ValidityListener {
        /** {@code lease} is guaranteed until {@code validUntilNanos}, a reading of the backend's ticker. */
        void valid(Lease lease, long validUntilNanos);

        /** {@link #valid(Lease, long)} of a grant asked for by {@code request} (its kind and limit). */
        default void valid(Lease lease, long validUntilNanos, LockRequest request) {
            valid(lease, validUntilNanos);
        }

        /** The backend is about to be asked to release {@code lease}. */
        default void freed(Lease lease) {}

        /** {@link #freed(Lease)} of a grant asked for by {@code request}. */
        default void freed(Lease lease, LockRequest request) {
            freed(lease);
        }

        /** This listener, told nothing of the leases whose key {@code ignored} accepts. */
        default ValidityListener ignoring(Predicate<String> ignored) {
            ValidityListener all = this;
            return new ValidityListener() {
                @Override
                public void valid(Lease lease, long validUntilNanos) {
                    if (!ignored.test(lease.key())) {
                        all.valid(lease, validUntilNanos);
                    }
                }

                @Override
                public void valid(Lease lease, long validUntilNanos, LockRequest request) {
                    if (!ignored.test(lease.key())) {
                        all.valid(lease, validUntilNanos, request);
                    }
                }

                @Override
                public void freed(Lease lease) {
                    if (!ignored.test(lease.key())) {
                        all.freed(lease);
                    }
                }

                @Override
                public void freed(Lease lease, LockRequest request) {
                    if (!ignored.test(lease.key())) {
                        all.freed(lease, request);
                    }
                }
            };
        }
    }

    private final LockBackendProvider delegate;
    private final ValidityListener listener;
    private final AtomicBoolean renewalsFail = new AtomicBoolean();
    private final AtomicBoolean releasesDropped = new AtomicBoolean();
    private final Map<String, Interception> granted = new ConcurrentHashMap<>();
    private final Map<String, Long> validUntilByOwner = new ConcurrentHashMap<>();
    private final Map<String, LockRequest> requestByOwner = new ConcurrentHashMap<>();
    private final AtomicReference<Ticker> ticker = new AtomicReference<>();

    private record Interception(LockBackend backend, Lease lease) {}

    InterceptingProvider(LockBackendProvider delegate) {
        this(delegate, (lease, validUntil) -> {});
    }

    /** Records every validity and every release asked of the backend in {@code history}. */
    InterceptingProvider(LockBackendProvider delegate, HistoryRecorder history) {
        this(delegate, recording(history));
    }

    /** A listener that records every validity and every release asked of the backend in {@code history}. */
    static ValidityListener recording(HistoryRecorder history) {
        return new ValidityListener() {
            @Override
            public void valid(Lease lease, long validUntilNanos) {
                history.valid(lease, validUntilNanos);
            }

            @Override
            public void valid(Lease lease, long validUntilNanos, LockRequest request) {
                history.valid(lease, validUntilNanos, request.kind(), request.limit());
            }

            @Override
            public void freed(Lease lease) {
                history.freed(lease);
            }

            @Override
            public void freed(Lease lease, LockRequest request) {
                history.freed(lease, request.kind(), request.limit());
            }
        };
    }

    InterceptingProvider(LockBackendProvider delegate, ValidityListener listener) {
        this.delegate = delegate;
        this.listener = listener;
    }

    /** From now on every renewal throws {@link LockBackendException}, as if the store could not be reached. */
    void failRenewals() {
        renewalsFail.set(true);
    }

    /**
     * From now on the locker's requests never reach the store, as if its process had died: renewals fail, and
     * releases are dropped (answered true, as if sent). What the store holds ends with its own time to live.
     */
    void goSilent() {
        renewalsFail.set(true);
        releasesDropped.set(true);
    }

    /**
     * Releases the latest lease granted on {@code key} through the real backend, without the locker knowing: the
     * store no longer holds the lock for its owner, while the owner's locker goes on renewing it.
     */
    void dropBehindLockersBack(String key) {
        Interception last = granted.get(key);
        if (last == null) {
            throw new IllegalStateException("No lease on '" + key + "' was granted through this provider");
        }
        last.backend().release(last.lease());
    }

    /** The last validity a grant or renewal reported for the acquisition of {@code ownerId}. */
    OptionalLong lastValidUntil(String ownerId) {
        Long v = validUntilByOwner.get(ownerId);
        return v == null ? OptionalLong.empty() : OptionalLong.of(v);
    }

    /** A reading of the ticker the backend was opened with (validities are readings of it). */
    long now() {
        Ticker t = ticker.get();
        if (t == null) {
            throw new IllegalStateException("No backend was opened through this provider");
        }
        return t.read();
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public Set<String> uriSchemes() {
        return delegate.uriSchemes();
    }

    @Override
    public LockBackend open(BackendConfig config) {
        ticker.set(config.ticker());
        return new ForwardingBackend(delegate.open(config)) {
            @Override
            public Optional<Lease> tryAcquire(LockRequest request) {
                return remember(request, backend.tryAcquire(request));
            }

            @Override
            public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
                return remember(request, backend.acquire(request, deadline));
            }

            @Override
            public CompletableFuture<Optional<Lease>> acquireAsync(
                    LockRequest request, Deadline deadline, Executor blockingExecutor) {
                CompletableFuture<Optional<Lease>> attempt = backend.acquireAsync(request, deadline, blockingExecutor);
                attempt.thenAccept(lease -> remember(request, lease));
                return attempt;
            }

            private Optional<Lease> remember(LockRequest request, Optional<Lease> lease) {
                lease.ifPresent(l -> {
                    requestByOwner.put(l.ownerId(), request);
                    granted.put(l.key(), new Interception(backend, l));
                    valid(l, l.validUntilNanos());
                });
                return lease;
            }

            @Override
            public OptionalLong storeRequests() {
                return backend.storeRequests();
            }

            @Override
            public OptionalLong renew(Lease lease, Duration leaseTime) {
                if (renewalsFail.get()) {
                    throw new LockBackendException("staged by the conformance kit: the store is unreachable");
                }
                OptionalLong validUntil = backend.renew(lease, leaseTime);
                validUntil.ifPresent(v -> valid(lease, v));
                return validUntil;
            }

            @Override
            public boolean release(Lease lease) {
                if (releasesDropped.get()) {
                    return true; // silenced: the store is not asked
                }
                LockRequest request = requestByOwner.remove(lease.ownerId());
                if (request == null) {
                    listener.freed(lease);
                } else {
                    listener.freed(lease, request);
                }
                return backend.release(lease);
            }
        };
    }

    private void valid(Lease lease, long validUntilNanos) {
        validUntilByOwner.merge(lease.ownerId(), validUntilNanos, Math::max);
        LockRequest request = requestByOwner.get(lease.ownerId());
        if (request == null) {
            listener.valid(lease, validUntilNanos);
        } else {
            listener.valid(lease, validUntilNanos, request);
        }
    }
}
