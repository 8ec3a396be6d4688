package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks in Cassandra by one of seed 000's algorithms ({@link QueueAlgorithm} or {@link LegacyAlgorithm}), leases as
 * TTLs on the lock's cells rewritten by the locker's renewal, optional fencing tokens ({@link Fencing}), and for the
 * queue a GlobalTime replica ({@link GlobalTime}) for its tickets. One driver session per backend: its own, closed
 * with it, or the application's, left open. Breaking a key for both algorithms, looking holders up and asking them to
 * let go for the queue ({@link Inspection}); a lock-delay for both ({@link Ttl#held}).
 */
final class CassandraLockBackend implements LockBackend {

    private static final Logger LOG = LoggerFactory.getLogger(CassandraLockBackend.class);

    private final CqlSession session;
    private final boolean ownsSession;
    private final CassandraSettings settings;
    private final CassandraCalls calls;
    private final CassandraStatements statements;
    private final ScheduledExecutorService scheduler;
    private final GlobalTime time;
    private final LockAlgorithm algorithm;
    private final Fencing fencing;
    private final Capabilities capabilities;
    private final Inspection inspection;

    CassandraLockBackend(
            CqlSession session,
            boolean ownsSession,
            CassandraSettings settings,
            CassandraCalls calls,
            CassandraStatements statements,
            GlobalTime time,
            LockAlgorithm algorithm,
            Clock clock) {
        this.session = session;
        this.ownsSession = ownsSession;
        this.settings = settings;
        this.calls = calls;
        this.statements = statements;
        this.time = time;
        this.algorithm = algorithm;
        this.fencing = settings.fencing() ? new Fencing(calls, statements) : null;
        // Both algorithms keep a grant's cells the lock-delay longer than the lease (Ttl.held).
        Capabilities locks = new Capabilities(settings.fencing(), algorithm.fair(), false, LeaseModel.RENEWED_TTL)
                .with(Capabilities.Operation.LOCK_DELAY);
        // The queue serves read-write locks and semaphores too (SharedEntries); the legacy algorithm only locks. Its
        // main row has key columns only, whose TTL Cassandra does not show: no look-up, which must give a lease end.
        boolean queue = algorithm instanceof QueueAlgorithm;
        // Release requests: the queue's holders read them at each renewal, if the keyspace has their table (a keyspace
        // made by an older version may lack it). The legacy holders do not read them.
        Capabilities queueCapabilities = locks.with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT)
                .with(Capabilities.Operation.INSPECT, Capabilities.Operation.BREAK);
        this.capabilities = !queue
                ? locks.with(Capabilities.Operation.BREAK)
                : statements.readReleaseRequests == null
                        ? queueCapabilities
                        : queueCapabilities.with(Capabilities.Operation.REQUEST_RELEASE);
        this.inspection = new Inspection(calls, statements, fencing, queue, clock);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "distlock-cassandra-time");
            t.setDaemon(true);
            return t;
        });
        if (time != null) {
            try {
                time.start(scheduler);
            } catch (RuntimeException e) {
                scheduler.shutdownNow();
                throw e;
            }
        }
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        return fenced(algorithm.tryAcquire(request));
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return fenced(algorithm.acquire(request, deadline));
    }

    /**
     * Native: no thread waits; the grant is handed over (and its fencing token drawn) on {@code blockingExecutor}, so
     * that a caller's continuation never runs on a driver thread.
     */
    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        CompletableFuture<Optional<CassandraLease>> waiting = algorithm.acquireAsync(request, deadline);
        CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
        result.whenComplete((v, e) -> {
            if (result.isCancelled()) {
                waiting.cancel(false);
            }
        });
        waiting.whenCompleteAsync(
                (granted, error) -> {
                    if (error != null) {
                        result.completeExceptionally(CassandraCalls.unwrap(error));
                        return;
                    }
                    Optional<Lease> lease;
                    try {
                        lease = fenced(granted);
                    } catch (RuntimeException e) {
                        result.completeExceptionally(e);
                        return;
                    }
                    if (!result.complete(lease)) {
                        lease.ifPresent(this::releaseQuietly); // cancelled meanwhile: the grant is nobody's
                    }
                },
                blockingExecutor);
        return result;
    }

    private void releaseQuietly(Lease lease) {
        try {
            release(lease);
        } catch (RuntimeException e) {
            LOG.warn(
                    "Could not release lock '{}' granted after its wait was cancelled ({}); it runs out with its TTL",
                    lease.key(),
                    e.getMessage());
        }
    }

    /** Draws the fencing token of a grant when fencing is on; releases the grant if that fails. */
    private Optional<Lease> fenced(Optional<CassandraLease> granted) {
        if (granted.isEmpty() || fencing == null) {
            return granted.map(Lease.class::cast);
        }
        CassandraLease lease = granted.get();
        try {
            // Per key and space: the fencing counter's row is the space's partition of the key.
            return Optional.of(lease.withFencingToken(fencing.next(lease.partition(), lease.key())));
        } catch (RuntimeException e) {
            try {
                algorithm.release(lease);
            } catch (RuntimeException releaseFailure) {
                e.addSuppressed(releaseFailure);
            }
            throw e instanceof LockBackendException b
                    ? b
                    : new LockBackendException("Could not draw a fencing token for lock '" + lease.key() + "'", e);
        }
    }

    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        return algorithm.renew((CassandraLease) lease, leaseTime);
    }

    @Override
    public boolean release(Lease lease) {
        return algorithm.release((CassandraLease) lease);
    }

    /** Reads the key's three spaces at the backend's consistency: see {@link Inspection#inspect}. */
    @Override
    public LockState inspect(String key) {
        if (!capabilities.offers(Capabilities.Operation.INSPECT)) {
            return LockBackend.super.inspect(key);
        }
        return inspection.inspect(key);
    }

    /** A scan of the owner table, then a look-up per held key: see {@link Inspection#listHeld}. */
    @Override
    public List<LockState> listHeld() {
        if (!capabilities.offers(Capabilities.Operation.INSPECT)) {
            return LockBackend.super.listHeld();
        }
        return inspection.listHeld();
    }

    /**
     * Deletes the holders' cells, not the waiters': the holders learn it at their next renewal (a third of the lease
     * plus a request), the next waiter at its next poll. See {@link Inspection#breakLock}.
     */
    @Override
    public List<LockHolder> breakLock(String key) {
        return inspection.breakLock(key);
    }

    /**
     * Writes a release request per holder, which each reads at its next renewal (a third of the lease plus a request).
     * See {@link Inspection#requestRelease}.
     */
    @Override
    public List<LockHolder> requestRelease(String key) {
        if (!capabilities.offers(Capabilities.Operation.REQUEST_RELEASE)) {
            return LockBackend.super.requestRelease(key);
        }
        return inspection.requestRelease(key);
    }

    @Override
    public OptionalLong storeRequests() {
        return OptionalLong.of(calls.requests());
    }

    /** The backend's statement runner (tests turn tracing on through it). */
    CassandraCalls calls() {
        return calls;
    }

    /** The algorithm, for tests that drive its steps. */
    LockAlgorithm algorithm() {
        return algorithm;
    }

    /** The GlobalTime replica; null for the legacy algorithm. */
    GlobalTime time() {
        return time;
    }

    @Override
    public void close() {
        if (time != null) {
            time.stop(scheduler);
        } else {
            scheduler.shutdownNow();
        }
        algorithm.close();
        if (!ownsSession) {
            return; // the application's session: it stays open for the application
        }
        try {
            session.close();
        } catch (RuntimeException e) {
            LOG.debug("Closing the Cassandra session failed: {}", e.toString());
        }
    }

    @Override
    public String toString() {
        return "CassandraLockBackend[" + settings.location().hosts() + "/"
                + settings.location().keyspace() + ", " + settings.algorithm().optionValue() + "]";
    }
}
