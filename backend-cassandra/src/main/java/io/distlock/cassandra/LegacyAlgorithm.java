package io.distlock.cassandra;

import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 000 section 4, the algorithm the queue replaced: a shadow table where contenders write themselves and check
 * that they are alone, and a main table recording the owner. {@link #tryLockAsync} is Listing 3, {@link #acquire}
 * Listing 4 with its random back-off ({@link LegacyAcquisition}). A baseline for the benchmark only: it is not fair (a
 * releasing holder often takes the lock again while the others sleep) and its waits are long under contention.
 *
 * <p>Every step is an asynchronous driver request, and a wait is lock-api's {@link
 * io.distlock.toolkit.PollingAcquisition}, as the queue's is: no thread is parked between attempts, and a store that fails
 * is attempted again after the shared back-off until it has failed for the {@code connectTimeout} (the listing would
 * retry for ever) or until the deadline.
 */
final class LegacyAlgorithm implements LockAlgorithm {

    private static final Logger LOG = LoggerFactory.getLogger(LegacyAlgorithm.class);

    /** The outcomes of Listing 3. */
    enum Outcome {
        SUCCESS,
        ANOTHER_THREAD_IS_OWNER,
        CONCURRENT_ATTEMPT
    }

    /** Listing 4, line 6: wait 0..1000 ms while another thread owns the lock. */
    static final long OWNED_BACKOFF_MS = 1000;
    /** Listing 4, line 9: wait 0..50 x attempt ms after a concurrent attempt. */
    static final long CONCURRENT_BACKOFF_MS = 50;

    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final CassandraCalls calls;
    private final CassandraStatements statements;
    private final Ticker ticker;
    private final LeaseValidity validity;
    private final WakeUps wakeUps;
    private final Duration outageLimit;
    private final Duration lockDelay;
    private final ScheduledExecutorService timers = CassandraAcquisition.newTimer();

    /**
     * @param outageLimit how long the store may fail every attempt of a wait before the wait fails with the store's
     *     failure, deadline or not (the backend's {@code connectTimeout})
     * @param lockDelay how much longer than the lease a main cell keeps the key unless deleted (zero for none)
     */
    LegacyAlgorithm(
            CassandraCalls calls,
            CassandraStatements statements,
            Ticker ticker,
            LeaseValidity validity,
            WakeUps wakeUps,
            Duration outageLimit,
            Duration lockDelay) {
        this.lockDelay = lockDelay;
        this.calls = calls;
        this.statements = statements;
        this.ticker = ticker;
        this.validity = validity;
        this.wakeUps = wakeUps;
        this.outageLimit = outageLimit;
    }

    @Override
    public boolean fair() {
        return false;
    }

    @Override
    public Optional<CassandraLease> tryAcquire(LockRequest request) {
        return tryLock(request).lease;
    }

    /** Listing 4, waiting on the calling thread. */
    @Override
    public Optional<CassandraLease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return waitFor(request, deadline).awaitHere();
    }

    @Override
    public CompletableFuture<Optional<CassandraLease>> acquireAsync(LockRequest request, Deadline deadline) {
        return waitFor(request, deadline).start().result();
    }

    private LegacyAcquisition waitFor(LockRequest request, Deadline deadline) {
        return new LegacyAcquisition(this, request, calls, wakeUps, timers, deadline, outageLimit);
    }

    /** Listing 3, waiting for its answer. */
    Result tryLock(LockRequest request) {
        return CassandraCalls.join(tryLockAsync(request));
    }

    /** Listing 3 without waiting; a TryLock that does not win has deleted its cells when the stage completes. */
    CompletionStage<Result> tryLockAsync(LockRequest request) {
        String key = request.key();
        String owner = request.ownerId();
        int ttl = Ttl.seconds(request.leaseTime());
        int heldTtl = Ttl.held(request.leaseTime(), lockDelay); // the main cell's: the lease plus the lock-delay
        // Lines 1-6.
        return calls.sendForRows(statements.legacyReadMain.bind(key), "reading the main row")
                .thenCompose(main -> {
                    if (main.isEmpty()) {
                        return contend(request, ttl, heldTtl);
                    }
                    if (main.size() == 1 && main.get(0).getString(0).equals(owner)) {
                        // Ours already (a write whose answer was lost): rewrite it for a fresh TTL.
                        long sent = ticker.read();
                        return calls.send(statements.legacyWriteMain.bind(key, owner, heldTtl), "writing the main cell")
                                .thenApply(written -> Result.of(Outcome.SUCCESS, lease(request, sent)));
                    }
                    return CompletableFuture.completedFuture(Result.of(Outcome.ANOTHER_THREAD_IS_OWNER, null));
                });
    }

    /**
     * Listing 3 lines 7-15, the shadow cell written with {@code ttl}, the main cell with {@code heldTtl}; withdraws our
     * cells unless granted (also when a step fails).
     */
    private CompletionStage<Result> contend(LockRequest request, int ttl, int heldTtl) {
        String key = request.key();
        String owner = request.ownerId();
        AtomicBoolean mainWritten = new AtomicBoolean();
        // Lines 7-9.
        CompletionStage<Result> contended = writeShadowAsync(key, owner, ttl)
                .thenCompose(written -> aloneInShadowAsync(key))
                .thenCompose(
                        alone -> !alone ? CompletableFuture.completedFuture(false) : mainRowEmptyAsync(key)) // line 10
                .thenCompose(free -> {
                    if (!free) {
                        return CompletableFuture.completedFuture(Result.of(Outcome.CONCURRENT_ATTEMPT, null));
                    }
                    // Lines 11-13.
                    long sent = ticker.read();
                    mainWritten.set(true);
                    return calls.send(statements.legacyWriteMain.bind(key, owner, heldTtl), "writing the main cell")
                            .thenCompose(written -> deleteShadowAsync(key, owner))
                            .thenApply(deleted -> Result.of(Outcome.SUCCESS, lease(request, sent)));
                });
        // Lines 14-15, and a failure's clean-up.
        return contended
                .handle((result, error) -> result)
                .thenCompose(result -> result != null && result.outcome == Outcome.SUCCESS
                        ? CompletableFuture.completedFuture(null)
                        : withdrawAsync(key, owner, mainWritten.get()))
                .thenCompose(withdrawn -> contended);
    }

    private CassandraLease lease(LockRequest request, long sentNanos) {
        return new CassandraLease(
                request.key(),
                request.ownerId(),
                null,
                null,
                request.leaseTime(),
                OptionalLong.empty(),
                validity.until(sentNanos, request.leaseTime()),
                request.lossListener());
    }

    /** Listing 3 line 7: writes our shadow cell. */
    CompletionStage<?> writeShadowAsync(String key, String owner, int ttl) {
        return calls.send(statements.legacyWriteShadow.bind(key, owner, ttl), "writing the shadow cell");
    }

    /** Listing 3 lines 8-9: whether the shadow row holds one cell (ours, written before). */
    CompletionStage<Boolean> aloneInShadowAsync(String key) {
        return calls.sendForRows(statements.legacyReadShadow.bind(key), "reading the shadow row")
                .thenApply(rows -> rows.size() == 1);
    }

    /** Listing 3 lines 1 and 10: whether the main row is empty. */
    CompletionStage<Boolean> mainRowEmptyAsync(String key) {
        return calls.sendForRows(statements.legacyReadMain.bind(key), "reading the main row")
                .thenApply(List::isEmpty);
    }

    private CompletionStage<?> deleteShadowAsync(String key, String owner) {
        return calls.send(statements.legacyDeleteShadow.bind(key, owner), "deleting the shadow cell");
    }

    /**
     * Listing 3 lines 14-15 (and a failure's clean-up): deletes our shadow cell, and our main cell if written. Never
     * fails (a cell that could not be deleted runs out with its TTL).
     */
    CompletionStage<Void> withdrawAsync(String key, String owner, boolean mainWritten) {
        CompletionStage<?> deleted;
        try {
            deleted = deleteShadowAsync(key, owner)
                    .thenCompose(v -> mainWritten
                            ? calls.send(statements.legacyDeleteMain.bind(key, owner), "deleting the main cell")
                                    .thenAccept(answered -> {})
                            : DONE);
        } catch (RuntimeException e) {
            deleted = CompletableFuture.failedFuture(e);
        }
        return deleted.handle((v, error) -> {
            if (error != null) {
                LOG.warn(
                        "Could not withdraw from lock '{}' ({}); its cells expire with their TTL",
                        key,
                        CassandraCalls.unwrap(error).getMessage());
            }
            return null;
        });
    }

    @Override
    public boolean renewalCheck(CassandraLease lease) {
        return !calls.rows(statements.legacyReadMainOwner.bind(lease.key(), lease.ownerId()), "checking the main cell")
                .isEmpty();
    }

    /** Rewrites the main cell: {@link LockAlgorithm#renewal}. */
    @Override
    public OptionalLong renewalRewrite(CassandraLease lease, Duration leaseTime) {
        return LockAlgorithm.renewal(
                lease,
                leaseTime,
                lockDelay,
                ticker,
                validity,
                ttl -> rewriteMain(lease, ttl),
                () -> calls.execute(
                        statements.legacyDeleteMain.bind(lease.key(), lease.ownerId()), "deleting the main cell"));
    }

    /** Rewrites the lease's main cell with TTL {@code ttl}; false if the lease was released meanwhile. */
    private boolean rewriteMain(CassandraLease lease, int ttl) {
        // Sent again after a replica timeout, each time only while the lease is not released (CassandraCalls.rewrite).
        return calls.rewrite(
                lease.fence(),
                requestTimeout -> calls.sendOnce(
                                statements.legacyWriteMain.bindNotResent(lease.key(), lease.ownerId(), ttl),
                                "renewing the lease",
                                requestTimeout)
                        .thenApply(result -> null),
                "renewing the lease");
    }

    @Override
    public boolean release(CassandraLease lease) {
        return CassandraCalls.join(releaseAsync(lease));
    }

    /** {@link #release} without waiting; answers whether the main cell was still ours. */
    CompletionStage<Boolean> releaseAsync(CassandraLease lease) {
        try {
            // After a renewal's rewrite in flight, so that it cannot bring the deleted cell back (RewriteFence).
            return lease.fence()
                    .release()
                    .thenCompose(v -> calls.sendForRows(
                            statements.legacyReadMainOwner.bind(lease.key(), lease.ownerId()),
                            "checking the main cell"))
                    .thenCompose(owned -> calls.send(
                                    statements.legacyDeleteMain.bind(lease.key(), lease.ownerId()),
                                    "deleting the main cell")
                            .thenApply(deleted -> !owned.isEmpty()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        CassandraCalls.stopBeforeTheSessionCloses(timers);
    }

    /** The outcome of Listing 3 and, on success, the lease. */
    static final class Result {
        final Outcome outcome;
        final Optional<CassandraLease> lease;

        private Result(Outcome outcome, CassandraLease lease) {
            this.outcome = outcome;
            this.lease = Optional.ofNullable(lease);
        }

        static Result of(Outcome outcome, CassandraLease lease) {
            return new Result(outcome, lease);
        }
    }
}
