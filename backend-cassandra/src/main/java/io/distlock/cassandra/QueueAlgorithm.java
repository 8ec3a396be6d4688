package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 000 section 5: a queue row and an owner row per lock, all reads and writes at the backend's (quorum)
 * consistency, no lightweight transaction. {@link #acquire} is Listing 6, {@link #tryAcquire} Listing 7.
 *
 * <p>Waiting is polling, adaptive to the waiter's place in the queue and to the pace at which the queue advances: the
 * next in line polls every {@code pollMin}; a waiter further back polls at half the time it expects to need to become
 * next in line (the time per place it has seen the queue advance, times its place), at most {@code pollMin} doubled
 * per place and at most {@code pollMax} apart. Waiters of this backend are woken at
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
    private final OwnerSlots slots = new OwnerSlots();
    private final LowWaterMarks marks = new LowWaterMarks();

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

    /** The time part of {@code ticket} (microseconds). */
    static long micros(String ticket) {
        return Long.parseLong(ticket.substring(0, 20));
    }

    /** A new attempt of {@code request} with a ticket from the time service. */
    Attempt attempt(LockRequest request) {
        return new Attempt(request, ticket(time.ticketMicros(), request.ownerId()));
    }

    /** The largest low-water mark this backend has seen for {@code key}, empty string if none. */
    String knownMark(String key) {
        return marks.get(key);
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
        if (!holdsOwnerCell(lease)) {
            return OptionalLong.empty();
        }
        int ttl = Ttl.seconds(lease.leaseTime());
        long sent = ticker.read();
        calls.executeAll(
                "renewing the lease",
                statements.enqueue.bind(lease.key(), lease.ticket(), ttl),
                statements.writeOwner.bind(lease.key(), lease.slot(), lease.ownerId(), ttl));
        if (ticker.read() - lease.validUntilNanos() > 0) {
            // The cells may have expired between the check and the rewrite, and the rewrite brought them back while
            // another owner may hold the lock: withdraw them.
            deleteCells(lease.key(), lease.slot(), lease.ticket());
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
            boolean ours = holdsOwnerCell(lease);
            deleteCells(lease.key(), lease.slot(), lease.ticket());
            return ours;
        } finally {
            slots.free(lease.key(), lease.slot());
            wakeUps.signal(lease.key());
        }
    }

    private boolean holdsOwnerCell(CassandraLease lease) {
        Row row = calls.execute(statements.readOwner.bind(lease.key(), lease.slot()), "checking the owner cell")
                .one();
        return row != null && lease.ownerId().equals(row.getString(0));
    }

    /**
     * Deletes a holder's cells: the owner cell first (a waiter that finds itself first in the queue then finds the owner
     * row empty), then the queue cell together with raising the queue's low-water mark to the ticket (one partition,
     * one mutation). Every live ticket but a late one from a clock behind is larger: the holder was first.
     */
    private void deleteCells(String key, String slot, String ticket) {
        calls.execute(statements.deleteOwner.bind(key, slot), "deleting the owner cell");
        calls.execute(
                BatchStatement.newInstance(
                                BatchType.UNLOGGED,
                                statements.dequeue.bind(key, ticket),
                                statements.raiseMark.bind(micros(ticket), ticket, key))
                        .setConsistencyLevel(statements.dequeue.consistency()),
                "deleting the queue cell");
        marks.raise(key, ticket);
    }

    /**
     * The wait before the next poll at {@code place} in the queue (0 = first) while the queue's pace is unknown: the
     * next in line every {@code pollMin}, each place further back twice as long, at most {@code pollMax}.
     */
    long pollInterval(int place) {
        if (place <= 1) {
            return pollMinNanos;
        }
        int shift = Math.min(place - 1, 40);
        long interval = pollMinNanos << shift;
        return interval <= 0 || interval > pollMaxNanos ? pollMaxNanos : interval;
    }

    /**
     * The wait before the next poll at {@code place} when the queue has been seen to advance one place every {@code
     * perPlaceNanos}: half the expected time until this waiter is next in line, so that it is awake when the holder
     * ahead of it releases (a first waiter asleep stalls the whole queue), within {@code pollMin} .. {@link
     * #pollInterval}.
     */
    long pacedPollInterval(int place, long perPlaceNanos) {
        long cap = pollInterval(place);
        if (place <= 1 || perPlaceNanos <= 0) {
            return cap;
        }
        long expected = perPlaceNanos * (place - 1) / 2;
        return Math.max(pollMinNanos, Math.min(cap, expected));
    }

    /**
     * One attempt of one owner, with its ticket: the steps of Listings 6 and 7 as methods, so that tests can drive two
     * attempts step by step. Not thread-safe: one thread drives an attempt.
     */
    final class Attempt {
        private final LockRequest request;
        private final String key;
        private final String slot;
        private final int ttl;
        private String ticket;
        private String mark; // the largest low-water mark seen; queue reads start past it
        private boolean queued; // a queue cell may exist
        private boolean claimed; // an owner cell may exist
        private long queueWrittenAt;
        private int pacePlace = -1; // the place last seen, for the queue's pace
        private long pacePlaceAt;
        private long perPlaceNanos; // 0 while unknown

        Attempt(LockRequest request, String ticket) {
            this.request = request;
            this.key = request.key();
            this.ticket = ticket;
            this.ttl = Ttl.seconds(request.leaseTime());
            this.slot = slots.take(key);
            this.mark = marks.get(key);
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
         * Learns the queue's low-water mark when this backend knows none for the key yet (a read of the static
         * column only, which steps over no tombstone): queue reads then start past it.
         */
        void learnMark() {
            if (mark.isEmpty()) {
                Row row = calls.execute(statements.readMark.bind(key), "reading the queue's low-water mark")
                        .one();
                raiseMark(row == null ? null : row.getString(0));
            }
        }

        private void raiseMark(String seen) {
            if (seen != null && seen.compareTo(mark) > 0) {
                mark = seen;
                marks.raise(key, seen);
            }
        }

        /**
         * Listing 6 line 2: our place in the queue, 0 when first; {@link Integer#MAX_VALUE} when more than {@link
         * #QUEUE_READ_LIMIT} are ahead; {@link #GONE} when our cell is gone (it expired while this process was
         * suspended); {@link #BELOW_MARK} when our ticket is not above the queue's low-water mark (a holder with a
         * later ticket has released: our ticket came from a clock behind). The read starts past the largest mark seen,
         * so it steps over none of the tombstones released holders left; cells at or below the mark are not counted.
         */
        int place() {
            List<Row> rows = calls.rows(statements.readQueue.bind(key, mark, QUEUE_READ_LIMIT), "reading the queue");
            for (Row row : rows) {
                raiseMark(row.getString(1));
            }
            if (ticket.compareTo(mark) <= 0) {
                return BELOW_MARK;
            }
            int ahead = 0;
            for (Row row : rows) {
                String other = row.getString(0);
                if (other.compareTo(mark) <= 0) {
                    continue;
                }
                int order = other.compareTo(ticket);
                if (order == 0) {
                    return ahead;
                }
                if (order > 0) {
                    return GONE;
                }
                ahead++;
            }
            return rows.size() < QUEUE_READ_LIMIT ? GONE : Integer.MAX_VALUE;
        }

        /**
         * Our ticket is at or below the low-water mark: reads no longer see it. Deletes the cell and queues again with
         * a ticket past the mark (fairness yields to the clock skew that caused it; exclusion never rests on the
         * queue).
         */
        void reticket() {
            calls.execute(statements.dequeue.bind(key, ticket), "deleting the queue cell");
            ticket = QueueAlgorithm.ticket(Math.max(time.ticketMicros(), micros(mark) + 1), request.ownerId());
            enqueue();
        }

        /** {@link #place()}, after queueing again if our cell is gone or below the mark. */
        int placeRequeued() {
            int place = place();
            if (place == BELOW_MARK) {
                reticket();
                place = place();
            } else if (place == GONE) {
                enqueue(); // our cell expired while we were suspended: put it back, same ticket
                place = place();
            }
            return place;
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
                        slot,
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
                    statements.writeOwner.bind(key, slot, request.ownerId(), ttl));
        }

        /** Listing 6 line 4 (Lemma 1: of two concurrent claimers, at least one sees both cells). */
        boolean ownerRowHoldsOnlyUs() {
            // Rows are keyed by slot; concurrent claimers hold different slots, so each wrote its own row.
            List<Row> owners = calls.rows(statements.readOwners.bind(key), "reading the owner row");
            return owners.size() == 1 && owners.get(0).getString(0).equals(request.ownerId());
        }

        /** Listing 6 line 7. */
        void withdrawClaim() {
            calls.execute(statements.deleteOwner.bind(key, slot), "deleting the owner cell");
            claimed = false;
        }

        /** Keeps the queue cell alive while waiting: rewrites it once a third of the lease has passed. */
        void keepAliveIfDue() {
            if (ticker.read() - queueWrittenAt > request.leaseTime().toNanos() / 3) {
                enqueue();
            }
        }

        /** Measures how fast the queue advances (a running mean of the time per place moved up); returns it. */
        long pace(int place) {
            long now = ticker.read();
            if (place < 1 || place == Integer.MAX_VALUE) {
                pacePlace = -1;
            } else if (pacePlace > place) {
                long perPlace = (now - pacePlaceAt) / (pacePlace - place);
                perPlaceNanos = perPlaceNanos == 0 ? perPlace : (perPlaceNanos + perPlace) / 2;
                pacePlace = place;
                pacePlaceAt = now;
            } else if (pacePlace != place) {
                pacePlace = place;
                pacePlaceAt = now;
            }
            return perPlaceNanos;
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
                            learnMark();
                            enqueue();
                        }
                        place = placeRequeued();
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
                    waiter.await(deadline.remainingNanos(pacedPollInterval(place, pace(place))));
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
                learnMark();
                enqueue();
                long start = ticker.read();
                while (placeRequeued() == 0) {
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
                slots.free(key, slot);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** {@link Attempt#place()}: our queue cell is gone. */
    static final int GONE = -1;

    /** {@link Attempt#place()}: our ticket is at or below the queue's low-water mark. */
    static final int BELOW_MARK = -2;

    /**
     * The largest low-water mark this backend has seen per key, so that its next attempt on a key reads from there at
     * once. Bounded: the least recently used keys are forgotten (their next attempt reads the mark again).
     */
    private static final class LowWaterMarks {
        private static final int MAX_KEYS = 4096;
        private final Map<String, String> marks = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                return size() > MAX_KEYS;
            }
        };

        synchronized String get(String key) {
            return marks.getOrDefault(key, "");
        }

        synchronized void raise(String key, String mark) {
            marks.merge(key, mark, (a, b) -> a.compareTo(b) >= 0 ? a : b);
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
