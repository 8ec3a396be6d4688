package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 000 section 4, the algorithm the queue replaced: a shadow table where contenders write themselves and check
 * that they are alone, and a main table recording the owner. {@link #tryLock} is Listing 3, {@link #acquire} Listing
 * 4 with its random back-off. A baseline for the benchmark only: it is not fair (a releasing holder often takes the
 * lock again while the others sleep) and its waits are long under contention.
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

    private final CqlCalls calls;
    private final CassandraStatements statements;
    private final Ticker ticker;
    private final LeaseValidity validity;

    private final Duration outageLimit;

    /**
     * @param outageLimit how long the store may fail every attempt of a wait before the wait fails with the store's
     *     failure, deadline or not (the backend's {@code connectTimeout})
     */
    LegacyAlgorithm(
            CqlCalls calls,
            CassandraStatements statements,
            Ticker ticker,
            LeaseValidity validity,
            Duration outageLimit) {
        this.outageLimit = outageLimit;
        this.validity = validity;
        this.calls = calls;
        this.statements = statements;
        this.ticker = ticker;
    }

    @Override
    public boolean fair() {
        return false;
    }

    @Override
    public Optional<CassandraLease> tryAcquire(LockRequest request) {
        return tryLock(request).lease;
    }

    /**
     * Listing 4. A store that fails attempts is tried again after a back-off that doubles from {@value
     * #CONCURRENT_BACKOFF_MS} ms to {@value #OWNED_BACKOFF_MS} ms; once it has failed every attempt for the outage limit,
     * the wait fails with its failure, deadline or not (the listing would retry forever).
     */
    @Override
    public Optional<CassandraLease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        int attempt = 1;
        int failures = 0;
        Deadline outageEnds = null;
        LockBackendException lastFailure = null;
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException("Interrupted waiting for lock '" + request.key() + "'");
            }
            long backoffMs;
            try {
                Result result = tryLock(request);
                lastFailure = null;
                failures = 0;
                outageEnds = null;
                if (result.outcome == Outcome.SUCCESS) {
                    return result.lease;
                }
                if (result.outcome == Outcome.ANOTHER_THREAD_IS_OWNER) {
                    backoffMs = ThreadLocalRandom.current().nextLong(OWNED_BACKOFF_MS + 1);
                } else {
                    backoffMs = ThreadLocalRandom.current().nextLong(CONCURRENT_BACKOFF_MS * attempt + 1);
                    attempt++;
                }
            } catch (LockBackendException e) {
                lastFailure = e;
                if (outageEnds == null) {
                    outageEnds = Deadline.after(outageLimit, ticker);
                } else if (outageEnds.hasPassed()) {
                    throw new LockBackendException(
                            "Could not acquire lock '" + request.key() + "': the store failed every attempt for "
                                    + outageLimit + " (connectTimeout): " + e.getMessage(),
                            e);
                }
                long bound = Math.min(CONCURRENT_BACKOFF_MS << Math.min(failures, 5), OWNED_BACKOFF_MS);
                failures++;
                backoffMs = ThreadLocalRandom.current().nextLong(bound / 2, bound + 1);
            }
            if (deadline.hasPassed()) {
                if (lastFailure != null) {
                    throw new LockBackendException(
                            "Could not acquire lock '" + request.key() + "' before the deadline: "
                                    + lastFailure.getMessage(),
                            lastFailure);
                }
                return Optional.empty();
            }
            long sleep = deadline.remainingNanos(TimeUnit.MILLISECONDS.toNanos(backoffMs));
            if (outageEnds != null) {
                sleep = Math.min(sleep, Math.max(0, outageEnds.remainingNanos())); // the last try inside the limit
            }
            TimeUnit.NANOSECONDS.sleep(sleep);
        }
    }

    /** Listing 3. */
    Result tryLock(LockRequest request) {
        String key = request.key();
        String owner = request.ownerId();
        int ttl = Ttl.seconds(request.leaseTime());
        // Lines 1-6.
        List<Row> main = calls.rows(statements.legacyReadMain.bind(key), "reading the main row");
        if (!main.isEmpty()) {
            if (main.size() == 1 && main.get(0).getString(0).equals(owner)) {
                // Ours already (a write whose answer was lost): rewrite it for a fresh TTL.
                long sent = ticker.read();
                calls.execute(statements.legacyWriteMain.bind(key, owner, ttl), "writing the main cell");
                return Result.of(Outcome.SUCCESS, lease(request, sent));
            }
            return Result.of(Outcome.ANOTHER_THREAD_IS_OWNER, null);
        }
        boolean mainWritten = false;
        boolean granted = false;
        try {
            // Lines 7-9.
            writeShadow(key, owner, ttl);
            if (aloneInShadow(key)) {
                // Lines 10-13.
                if (mainRowEmpty(key)) {
                    long sent = ticker.read();
                    mainWritten = true;
                    calls.execute(statements.legacyWriteMain.bind(key, owner, ttl), "writing the main cell");
                    deleteShadow(key, owner);
                    granted = true;
                    return Result.of(Outcome.SUCCESS, lease(request, sent));
                }
            }
            // Lines 14-15.
            return Result.of(Outcome.CONCURRENT_ATTEMPT, null);
        } finally {
            if (!granted) {
                withdraw(key, owner, mainWritten);
            }
        }
    }

    private CassandraLease lease(LockRequest request, long sentNanos) {
        return new CassandraLease(
                request.key(),
                request.ownerId(),
                null,
                null,
                request.leaseTime(),
                OptionalLong.empty(),
                validity.until(sentNanos, request.leaseTime()));
    }

    /** Listing 3 line 7: writes our shadow cell. */
    void writeShadow(String key, String owner, int ttl) {
        calls.execute(statements.legacyWriteShadow.bind(key, owner, ttl), "writing the shadow cell");
    }

    /** Listing 3 lines 8-9: whether the shadow row holds one cell (ours, written before). */
    boolean aloneInShadow(String key) {
        return calls.rows(statements.legacyReadShadow.bind(key), "reading the shadow row")
                        .size()
                == 1;
    }

    /** Listing 3 lines 1 and 10: whether the main row is empty. */
    boolean mainRowEmpty(String key) {
        return calls.rows(statements.legacyReadMain.bind(key), "reading the main row")
                .isEmpty();
    }

    private void deleteShadow(String key, String owner) {
        calls.execute(statements.legacyDeleteShadow.bind(key, owner), "deleting the shadow cell");
    }

    /** Listing 3 lines 14-15 (and a failure's clean-up): deletes our shadow cell, and our main cell if written. */
    void withdraw(String key, String owner, boolean mainWritten) {
        try {
            deleteShadow(key, owner);
            if (mainWritten) {
                calls.execute(statements.legacyDeleteMain.bind(key, owner), "deleting the main cell");
            }
        } catch (LockBackendException e) {
            LOG.warn("Could not withdraw from lock '{}' ({}); its cells expire with their TTL", key, e.getMessage());
        }
    }

    @Override
    public boolean renewalCheck(CassandraLease lease) {
        return !calls.rows(statements.legacyReadMainOwner.bind(lease.key(), lease.ownerId()), "checking the main cell")
                .isEmpty();
    }

    @Override
    public OptionalLong renewalRewrite(CassandraLease lease, Duration leaseTime) {
        long sent = ticker.read();
        // Sent again after a replica timeout, each time only while the lease is not released (CqlCalls.rewrite).
        boolean rewritten = calls.rewrite(
                lease.fence(),
                requestTimeout -> calls.sendOnce(
                                statements.legacyWriteMain.bindNotResent(
                                        lease.key(), lease.ownerId(), Ttl.seconds(leaseTime)),
                                "renewing the lease",
                                requestTimeout)
                        .thenApply(result -> null),
                "renewing the lease");
        if (!rewritten) {
            return OptionalLong.empty(); // released meanwhile
        }
        if (ticker.read() - lease.validUntilNanos() > 0) {
            calls.execute(statements.legacyDeleteMain.bind(lease.key(), lease.ownerId()), "deleting the main cell");
            return OptionalLong.empty();
        }
        long validUntil = validity.until(sent, leaseTime);
        lease.extendTo(validUntil);
        return OptionalLong.of(validUntil);
    }

    @Override
    public boolean release(CassandraLease lease) {
        CqlCalls.join(lease.fence().release()); // after a renewal's rewrite in flight (RewriteFence)
        boolean ours = !calls.rows(
                        statements.legacyReadMainOwner.bind(lease.key(), lease.ownerId()), "checking the main cell")
                .isEmpty();
        calls.execute(statements.legacyDeleteMain.bind(lease.key(), lease.ownerId()), "deleting the main cell");
        return ours;
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
