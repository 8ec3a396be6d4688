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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 000 section 5: a queue row and an owner row per lock, all reads and writes at the backend's (quorum)
 * consistency, no lightweight transaction. {@link #acquire} is Listing 6, {@link #tryAcquire} Listing 7.
 *
 * <p>Waiting is polling, adaptive to the waiter's place in the queue: the next in line polls every {@code pollMin},
 * each place further back four times less often, at most {@code pollMax} apart. Waiters of this backend are woken at
 * once when a holder of this backend releases the key ({@link LocalWakeUps}).
 */
final class QueueAlgorithm implements LockAlgorithm {

    private static final Logger LOG = LoggerFactory.getLogger(QueueAlgorithm.class);

    /** How many queue cells a waiter reads to learn its place; beyond that it polls at {@code pollMax}. */
    static final int QUEUE_READ_LIMIT = 32;

    /**
     * How long tryLock keeps retrying Listing 7's lines 4-10 while it is first in the queue but the owner row holds
     * another cell (a concurrent claimer about to withdraw, or a holder whose ticket is later than ours).
     */
    static final Duration TRY_CONFLICT_WINDOW = Duration.ofSeconds(1);

    private final CqlCalls calls;
    private final CassandraStatements statements;
    private final GlobalTime time;
    private final LocalWakeUps wakeUps;
    private final Ticker ticker;
    private final long pollMinNanos;
    private final long pollMaxNanos;

    QueueAlgorithm(
            CqlCalls calls,
            CassandraStatements statements,
            GlobalTime time,
            LocalWakeUps wakeUps,
            Ticker ticker,
            Duration pollMin,
            Duration pollMax) {
        this.calls = calls;
        this.statements = statements;
        this.time = time;
        this.wakeUps = wakeUps;
        this.ticker = ticker;
        this.pollMinNanos = pollMin.toNanos();
        this.pollMaxNanos = pollMax.toNanos();
    }

    @Override
    public boolean fair() {
        return true;
    }

    /** Listing 5: the 20-digit zero-padded microsecond time followed by the owner id. */
    static String ticket(long micros, String ownerId) {
        return String.format("%020d", micros) + ownerId;
    }

    /** A new attempt of {@code request} with a ticket from the time service. */
    Attempt attempt(LockRequest request) {
        return new Attempt(request, ticket(time.ticketMicros(), request.ownerId()));
    }

    /** Listing 6. */
    @Override
    public Optional<CassandraLease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return attempt(request).await(deadline);
    }

    /** Listing 7. */
    @Override
    public Optional<CassandraLease> tryAcquire(LockRequest request) {
        // Line 1: somebody holds it, refuse without queueing.
        if (!calls.rows(statements.readOwners.bind(request.key()), "reading the owner row")
                .isEmpty()) {
            return Optional.empty();
        }
        return attempt(request).tryOnce();
    }

    @Override
    public OptionalLong renew(CassandraLease lease) {
        if (calls.rows(statements.readOwner.bind(lease.key(), lease.ownerId()), "checking the owner cell")
                .isEmpty()) {
            return OptionalLong.empty();
        }
        int ttl = Ttl.seconds(lease.leaseTime());
        long sent = ticker.read();
        calls.executeAll(
                "renewing the lease",
                statements.enqueue.bind(lease.key(), lease.ticket(), ttl),
                statements.writeOwner.bind(lease.key(), lease.ownerId(), ttl));
        if (ticker.read() - lease.validUntilNanos() > 0) {
            // The cells may have expired between the check and the rewrite, and the rewrite brought them back while
            // another owner may hold the lock: withdraw them.
            deleteCells(lease.key(), lease.ownerId(), lease.ticket());
            return OptionalLong.empty();
        }
        long validUntil = sent + lease.leaseTime().toNanos();
        lease.extendTo(validUntil);
        return OptionalLong.of(validUntil);
    }

    /** Section 5.3: deletes our owner cell, then our queue cell. */
    @Override
    public boolean release(CassandraLease lease) {
        try {
            boolean ours = !calls.rows(
                            statements.readOwner.bind(lease.key(), lease.ownerId()), "checking the owner cell")
                    .isEmpty();
            deleteCells(lease.key(), lease.ownerId(), lease.ticket());
            return ours;
        } finally {
            wakeUps.signal(lease.key());
        }
    }

    private void deleteCells(String key, String ownerId, String ticket) {
        // The owner cell first: a waiter that finds itself first in the queue then finds the owner row empty.
        calls.execute(statements.deleteOwner.bind(key, ownerId), "deleting the owner cell");
        calls.execute(statements.dequeue.bind(key, ticket), "deleting the queue cell");
    }

    /** The wait before the next poll at {@code place} in the queue (0 = first). */
    long pollInterval(int place) {
        if (place <= 1) {
            return pollMinNanos;
        }
        int shift = Math.min(2 * (place - 1), 40);
        long interval = pollMinNanos << shift;
        return interval <= 0 || interval > pollMaxNanos ? pollMaxNanos : interval;
    }

    /**
     * One attempt of one owner, with its ticket: the steps of Listings 6 and 7 as methods, so that tests can drive two
     * attempts step by step. Not thread-safe: one thread drives an attempt.
     */
    final class Attempt {
        private final LockRequest request;
        private final String key;
        private final String ticket;
        private final int ttl;
        private boolean queued; // a queue cell may exist
        private boolean claimed; // an owner cell may exist
        private long queueWrittenAt;

        Attempt(LockRequest request, String ticket) {
            this.request = request;
            this.key = request.key();
            this.ticket = ticket;
            this.ttl = Ttl.seconds(request.leaseTime());
        }

        String ticket() {
            return ticket;
        }

        /** Listing 6 line 1 / Listing 7 line 3: adds our cell to the queue row (also refreshes its TTL). */
        void enqueue() {
            queued = true;
            long sent = ticker.read();
            calls.execute(statements.enqueue.bind(key, ticket, ttl), "adding to the queue");
            queueWrittenAt = sent;
        }

        /**
         * Listing 6 line 2: our place in the queue, 0 when first; {@link Integer#MAX_VALUE} when more than {@link
         * #QUEUE_READ_LIMIT} are ahead; -1 when our cell is gone (it expired while this process was suspended).
         */
        int place() {
            List<Row> rows = calls.rows(statements.readQueue.bind(key, QUEUE_READ_LIMIT), "reading the queue");
            for (int i = 0; i < rows.size(); i++) {
                int order = rows.get(i).getString(0).compareTo(ticket);
                if (order == 0) {
                    return i;
                }
                if (order > 0) {
                    return -1;
                }
            }
            return rows.size() < QUEUE_READ_LIMIT ? -1 : Integer.MAX_VALUE;
        }

        /**
         * Listing 6 lines 3-8: writes our owner cell (and refreshes our queue cell's TTL in the same round trip),
         * reads the owner row and keeps the cell only if it is alone there.
         */
        Optional<CassandraLease> claim() {
            long sent = ticker.read();
            writeOwner();
            if (ownerRowHoldsOnlyUs()) {
                queueWrittenAt = sent;
                return Optional.of(new CassandraLease(
                        key,
                        request.ownerId(),
                        ticket,
                        request.leaseTime(),
                        OptionalLong.empty(),
                        sent + request.leaseTime().toNanos()));
            }
            withdrawClaim();
            return Optional.empty();
        }

        /** Listing 6 line 3. */
        void writeOwner() {
            claimed = true;
            calls.executeAll(
                    "writing the owner cell",
                    statements.enqueue.bind(key, ticket, ttl),
                    statements.writeOwner.bind(key, request.ownerId(), ttl));
        }

        /** Listing 6 line 4 (Lemma 1: of two concurrent claimers, at least one sees both cells). */
        boolean ownerRowHoldsOnlyUs() {
            List<Row> owners = calls.rows(statements.readOwners.bind(key), "reading the owner row");
            return owners.size() == 1 && owners.get(0).getString(0).equals(request.ownerId());
        }

        /** Listing 6 line 7. */
        void withdrawClaim() {
            calls.execute(statements.deleteOwner.bind(key, request.ownerId()), "deleting the owner cell");
            claimed = false;
        }

        /** Keeps the queue cell alive while waiting: rewrites it once a third of the lease has passed. */
        void keepAliveIfDue() {
            if (ticker.read() - queueWrittenAt > request.leaseTime().toNanos() / 3) {
                enqueue();
            }
        }

        /** Listing 6: enqueue once, then poll until first and alone in the owner row, or until the deadline. */
        Optional<CassandraLease> await(Deadline deadline) throws InterruptedException {
            boolean granted = false;
            try (LocalWakeUps.Waiter waiter = wakeUps.register(key)) {
                LockBackendException lastFailure = null;
                while (true) {
                    if (Thread.interrupted()) {
                        throw new InterruptedException("Interrupted waiting for lock '" + key + "'");
                    }
                    int place = 1;
                    try {
                        if (!queued) {
                            enqueue();
                        }
                        place = place();
                        if (place < 0) {
                            enqueue(); // our cell expired while we were suspended: put it back, same ticket
                            place = place();
                        }
                        if (place == 0) {
                            Optional<CassandraLease> lease = claim();
                            if (lease.isPresent()) {
                                granted = true;
                                return lease;
                            }
                            place = 1; // another cell in the owner row: its owner leaves soon or holds; poll fast
                        } else {
                            keepAliveIfDue();
                        }
                        lastFailure = null;
                    } catch (LockBackendException e) {
                        lastFailure = e;
                        LOG.debug("Waiting for lock '{}': {}", key, e.toString());
                    }
                    if (deadline.hasPassed()) {
                        if (lastFailure != null) {
                            throw new LockBackendException(
                                    "Could not acquire lock '" + key + "' before the deadline: "
                                            + lastFailure.getMessage(),
                                    lastFailure);
                        }
                        return Optional.empty();
                    }
                    waiter.await(deadline.remainingNanos(pollInterval(place)));
                }
            } finally {
                if (!granted) {
                    withdraw();
                }
            }
        }

        /** Listing 7: one pass, retrying lines 4-10 only while first in the queue, for a short while. */
        Optional<CassandraLease> tryOnce() {
            boolean granted = false;
            try {
                enqueue();
                long start = ticker.read();
                while (place() == 0) {
                    Optional<CassandraLease> lease = claim();
                    if (lease.isPresent()) {
                        granted = true;
                        return lease;
                    }
                    if (ticker.read() - start > TRY_CONFLICT_WINDOW.toNanos()) {
                        break;
                    }
                    sleepQuietly(pollMinNanos);
                }
                return Optional.empty();
            } finally {
                if (!granted) {
                    withdraw();
                }
            }
        }

        /** Leaves nothing behind: deletes the owner cell and the queue cell this attempt may have written. */
        void withdraw() {
            boolean interrupted = Thread.interrupted();
            try {
                if (claimed) {
                    withdrawClaim();
                }
                if (queued) {
                    calls.execute(statements.dequeue.bind(key, ticket), "deleting the queue cell");
                    queued = false;
                }
            } catch (LockBackendException e) {
                LOG.warn(
                        "Could not withdraw from lock '{}' ({}); its cells expire with their TTL of {} s",
                        key,
                        e.getMessage(),
                        ttl);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private static void sleepQuietly(long nanos) {
        try {
            Thread.sleep(Math.max(1, nanos / 1_000_000L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
