package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockKind;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.PollingAcquisition;
import io.distlock.toolkit.WakeUps;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 000 section 5: a queue row and an owner row per lock, all reads and writes at the backend's (quorum)
 * consistency, no lightweight transaction. {@link #acquire} is Listing 6, {@link #tryAcquire} Listing 7.
 *
 * <p>Waiting is polling, adaptive to the waiter's place in the queue and to the pace at which the queue advances: the
 * next in line polls every {@code pollMin}; a waiter further back polls at half the time it expects to need to become
 * next in line (the time per place it has seen the queue advance, times its place), at most {@code pollMin} doubled
 * per place and at most {@code pollMax} apart, and never later than its queue cell's keep-alive is due. Waiters of
 * this backend are woken at once when a holder of this backend releases the key ({@link WakeUps}).
 *
 * <p>Read-write locks and semaphores use the same tables in partitions of their own, their tickets and owner cells
 * carrying the kind ({@link SharedEntries}): a waiter claims once the generalized grant rule admits it among the
 * tickets ahead of it ({@link SharedEntries#grantable}), and keeps its owner cell only if the owner row admits it
 * ({@link SharedEntries#admits}), docs/theory.md's Listing 6'.
 *
 * <p>Every step is an asynchronous driver request: a wait ({@link QueueAcquisition}) is a chain of callbacks and scheduled
 * polls that holds no thread, and the blocking {@link #acquire} waits for the same chain.
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

    private final CassandraCalls calls;
    private final CassandraStatements statements;
    private final GlobalTime time;
    private final WakeUps wakeUps;
    private final Ticker ticker;
    private final long pollMinNanos;
    private final long pollMaxNanos;
    private final OwnerSlots slots = new OwnerSlots();
    private final LowWaterMarks marks = new LowWaterMarks();
    private final ScheduledExecutorService polls;
    private final Duration outageLimit;
    private final LeaseValidity validity;
    private final Duration lockDelay;

    QueueAlgorithm(
            CassandraCalls calls,
            CassandraStatements statements,
            GlobalTime time,
            WakeUps wakeUps,
            Ticker ticker,
            Duration pollMin,
            Duration pollMax,
            Duration outageLimit,
            LeaseValidity validity,
            Duration lockDelay) {
        this.validity = validity;
        this.lockDelay = lockDelay;
        this.calls = calls;
        this.outageLimit = outageLimit;
        this.statements = statements;
        this.time = time;
        this.wakeUps = wakeUps;
        this.ticker = ticker;
        this.pollMinNanos = pollMin.toNanos();
        this.pollMaxNanos = pollMax.toNanos();
        this.polls = CassandraAcquisition.newTimer();
    }

    @Override
    public boolean fair() {
        return true;
    }

    /** Listing 5: the 20-digit zero-padded microsecond time followed by the entry (the owner id for a lock). */
    static String ticket(long micros, String entry) {
        return String.format("%020d", micros) + entry;
    }

    /** The entry part of {@code ticket}: the owner id, tagged with the kind outside the lock's space. */
    static String entry(String ticket) {
        return ticket.substring(20);
    }

    /** The time part of {@code ticket} (microseconds). */
    static long micros(String ticket) {
        return Long.parseLong(ticket.substring(0, 20));
    }

    /** A new attempt of {@code request} with a ticket from the time service. */
    Attempt attempt(LockRequest request) {
        return new Attempt(request, ticket(time.ticketMicros(), SharedEntries.entry(request)));
    }

    /** The largest low-water mark this backend has seen for {@code key}, empty string if none. */
    String knownMark(String key) {
        return marks.get(key);
    }

    /** Listing 6, waiting on the calling thread. */
    @Override
    public Optional<CassandraLease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return attempt(request).await(deadline);
    }

    /** Listing 6 without a thread. */
    @Override
    public CompletableFuture<Optional<CassandraLease>> acquireAsync(LockRequest request, Deadline deadline) {
        return attempt(request).waitFor(deadline).result();
    }

    /** Listing 7. */
    @Override
    public Optional<CassandraLease> tryAcquire(LockRequest request) {
        // Line 1: somebody holds it, refuse without queueing.
        if (request.kind() == LockKind.LOCK) {
            if (!calls.rows(statements.readOwners.bind(request.key()), "reading the owner row")
                    .isEmpty()) {
                return Optional.empty();
            }
        } else {
            String partition = SharedEntries.partition(request.kind(), request.key());
            List<String> owners = owners(calls.rows(
                    statements.readOwnersUpTo.bind(partition, SharedEntries.bound(request) + 1),
                    "reading the owner row"));
            if (!SharedEntries.admits(request, SharedEntries.entry(request), owners)) {
                return Optional.empty();
            }
        }
        return attempt(request).tryOnce();
    }

    @Override
    public OptionalLong renew(CassandraLease lease, Duration leaseTime) {
        if (!renewalCheck(lease)) {
            // Our owner cell is gone (expired, or deleted by an operator): our queue cell, first in the queue, would
            // hold every waiter back until its TTL.
            try {
                calls.execute(statements.dequeue.bind(lease.partition(), lease.ticket()), "deleting the queue cell");
            } catch (RuntimeException e) {
                LOG.warn("Lock '{}' is lost; its queue cell expires with its TTL ({})", lease.key(), e.getMessage());
            }
            return OptionalLong.empty();
        }
        return renewalRewrite(lease, leaseTime);
    }

    /**
     * Whether our owner cell is still there; in parallel, the release requests for it (one more read per renewal, when
     * the keyspace has the release table), each reported once to the lease's listener if the cell is ours. A failed
     * read of the requests fails nothing: the next renewal reads them again.
     */
    @Override
    public boolean renewalCheck(CassandraLease lease) {
        CompletableFuture<List<String>> requests = releaseRequestsAsync(lease);
        boolean ours = holdsOwnerCell(lease);
        if (ours) {
            lease.heard().read(CassandraCalls.join(requests));
        }
        return ours;
    }

    /** The ids of the release requests for the lease's owner cell; empty if none, or if they could not be read. */
    private CompletableFuture<List<String>> releaseRequestsAsync(CassandraLease lease) {
        if (statements.readReleaseRequests == null) {
            return CompletableFuture.completedFuture(List.of());
        }
        try {
            return calls.sendForRows(
                            statements.readReleaseRequests.bind(lease.partition(), lease.entry()),
                            "reading the release requests")
                    .thenApply(
                            rows -> rows.stream().map(row -> row.getString(0)).toList())
                    .exceptionally(e -> {
                        LOG.debug(
                                "Could not read the release requests of lock '{}' ({}); the next renewal reads them",
                                lease.key(),
                                CassandraCalls.unwrap(e).toString());
                        return List.of();
                    })
                    .toCompletableFuture();
        } catch (RuntimeException e) {
            LOG.debug("Could not read the release requests of lock '{}' ({})", lease.key(), e.toString());
            return CompletableFuture.completedFuture(List.of());
        }
    }

    /** Rewrites both cells: {@link LockAlgorithm#renewal}. */
    @Override
    public OptionalLong renewalRewrite(CassandraLease lease, Duration leaseTime) {
        return LockAlgorithm.renewal(
                lease,
                leaseTime,
                lockDelay,
                ticker,
                validity,
                ttl -> rewriteCells(lease, ttl),
                () -> deleteCells(lease));
    }

    /** Rewrites the lease's queue and owner cells with TTL {@code ttl}; false if the lease was released meanwhile. */
    private boolean rewriteCells(CassandraLease lease, int ttl) {
        // Sent again after a replica timeout, each time only while the lease is not released (CassandraCalls.rewrite).
        return calls.rewrite(
                lease.fence(),
                requestTimeout -> calls.sendAllOnce(
                        "renewing the lease",
                        requestTimeout,
                        statements.enqueue.bindNotResent(lease.partition(), lease.ticket(), ttl),
                        statements.writeOwner.bindNotResent(lease.partition(), lease.slot(), lease.entry(), ttl)),
                "renewing the lease");
    }

    /** Section 5.3: deletes our owner cell, then our queue cell. */
    @Override
    public boolean release(CassandraLease lease) {
        return CassandraCalls.join(releaseAsync(lease));
    }

    /** {@link #release} without waiting; answers whether the owner cell was still ours. */
    CompletionStage<Boolean> releaseAsync(CassandraLease lease) {
        CompletionStage<Boolean> released;
        try {
            // After a renewal's rewrite in flight, so that it cannot bring the deleted cells back (RewriteFence).
            released = lease.fence()
                    .release()
                    .thenCompose(v -> holdsOwnerCellAsync(lease))
                    .thenCompose(ours -> deleteCellsAsync(lease).thenApply(v -> ours));
        } catch (RuntimeException e) {
            released = CompletableFuture.failedFuture(e);
        }
        return released.whenComplete((ours, error) -> {
            slots.free(lease.partition(), lease.slot());
            if (lease.partition().equals(lease.key())) {
                // The longest waiter of this backend is the next in line here; the others keep their paced timers.
                wakeUps.wakeOne(lease.key());
            } else {
                wakeUps.wake(lease.partition()); // a release may admit several shared waiters
            }
        });
    }

    @Override
    public void close() {
        CassandraCalls.stopBeforeTheSessionCloses(polls);
    }

    private boolean holdsOwnerCell(CassandraLease lease) {
        return CassandraCalls.join(holdsOwnerCellAsync(lease));
    }

    private CompletionStage<Boolean> holdsOwnerCellAsync(CassandraLease lease) {
        return calls.send(statements.readOwner.bind(lease.partition(), lease.slot()), "checking the owner cell")
                .thenApply(result -> {
                    Row row = result.one();
                    return row != null && lease.entry().equals(row.getString(0));
                });
    }

    private void deleteCells(CassandraLease lease) {
        CassandraCalls.join(deleteCellsAsync(lease));
    }

    /** The owner cells' values. */
    private static List<String> owners(List<Row> rows) {
        List<String> owners = new ArrayList<>(rows.size());
        rows.forEach(row -> owners.add(row.getString(0)));
        return owners;
    }

    /**
     * {@link #deleteCellsAsync(String, String, String)} for an exclusive grant, which was first in the queue. A shared
     * one need not be (holders release in any order): it raises the low-water mark only if its ticket is still the
     * first past the mark, else it deletes its cells alone, so that the mark never passes a live holder or waiter.
     */
    private CompletionStage<Void> deleteCellsAsync(CassandraLease lease) {
        String key = lease.partition();
        if (lease.exclusive()) {
            return deleteCellsAsync(key, lease.slot(), lease.ticket());
        }
        return calls.send(statements.deleteOwner.bind(key, lease.slot()), "deleting the owner cell")
                .thenCompose(deleted ->
                        calls.sendForRows(statements.readQueue.bind(key, marks.get(key), 1), "reading the queue"))
                .thenCompose(
                        first -> !first.isEmpty() && first.get(0).getString(0).equals(lease.ticket())
                                ? deleteCellsAsync(key, lease.slot(), lease.ticket())
                                : calls.send(statements.dequeue.bind(key, lease.ticket()), "deleting the queue cell")
                                        .thenRun(() -> {}));
    }

    /**
     * Deletes a holder's cells: the owner cell first (a waiter that finds itself first in the queue then finds the owner
     * row empty), then the queue cell together with raising the queue's low-water mark to the ticket (one partition,
     * one mutation). Every live ticket but a late one from a clock behind is larger: the holder was first.
     */
    private CompletionStage<Void> deleteCellsAsync(String key, String slot, String ticket) {
        return calls.send(statements.deleteOwner.bind(key, slot), "deleting the owner cell")
                .thenCompose(deleted -> calls.send(
                        BatchStatement.newInstance(
                                        BatchType.UNLOGGED,
                                        statements.dequeue.bind(key, ticket),
                                        statements.raiseMark.bind(micros(ticket), ticket, key))
                                .setConsistencyLevel(statements.dequeue.consistency())
                                .setIdempotent(true), // a delete and a mark written with its own timestamp
                        "deleting the queue cell"))
                .thenRun(() -> marks.raise(key, ticket));
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

    /** What one pass of Listing 6's loop found: the lease when granted, else the place in the queue to poll from. */
    record Poll(Optional<CassandraLease> lease, int place) {}

    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    /**
     * One attempt of one owner, with its ticket: the steps of Listings 6 and 7 as asynchronous methods (tests drive two
     * attempts step by step by waiting for each step's stage). Not thread-safe: one chain of steps at a time drives an
     * attempt.
     */
    final class Attempt {
        private final LockRequest request;
        private final String key; // the partition of the request's key in its space
        private final String entry;
        private final String slot;
        private final int ttl;
        private final int heldTtl; // a claim's: the lease plus the lock-delay
        private final long keepAliveNanos;
        private String ticket;
        private String mark; // the largest low-water mark seen; queue reads start past it
        private boolean queued; // a queue cell may exist
        private boolean claimed; // an owner cell may exist
        private long queueWrittenAt;
        private int pacePlace = -1; // the place last seen, for the queue's pace
        private long pacePlaceAt;
        private long perPlaceNanos; // 0 while unknown
        private int ownerAhead; // polls in a row that found us first in the queue but another cell in the owner row

        Attempt(LockRequest request, String ticket) {
            this.request = request;
            this.key = SharedEntries.partition(request.kind(), request.key());
            this.entry = SharedEntries.entry(request);
            this.ticket = ticket;
            this.ttl = Ttl.seconds(request.leaseTime());
            this.heldTtl = Ttl.held(request.leaseTime(), lockDelay);
            this.keepAliveNanos = request.leaseTime().toNanos() / 3;
            this.slot = slots.take(key);
            this.mark = marks.get(key);
        }

        String ticket() {
            return ticket;
        }

        /** The partition of the request's key in its space (the key itself for a lock). */
        String key() {
            return key;
        }

        /** The request's key. */
        String lockKey() {
            return request.key();
        }

        /** How many queue cells a read learns the place from: more for a shared request, which may be far back. */
        private int queueReadLimit() {
            return request.kind() == LockKind.LOCK ? QUEUE_READ_LIMIT : QUEUE_READ_LIMIT + SharedEntries.bound(request);
        }

        /**
         * For a permit: refuses it, before anything is written, when the semaphore's queue or owner row holds a permit
         * of another N ({@link SharedEntries#checkLimit}).
         */
        CompletionStage<Void> checkLimitAsync() {
            if (request.kind() != LockKind.PERMIT) {
                return DONE;
            }
            return calls.sendForRows(statements.readQueue.bind(key, mark, queueReadLimit()), "reading the queue")
                    .thenCompose(queue -> calls.sendForRows(
                                    statements.readOwnersUpTo.bind(key, SharedEntries.bound(request) + 1),
                                    "reading the owner row")
                            .thenAccept(owners -> {
                                List<String> entries = owners(owners);
                                queue.forEach(row -> entries.add(entry(row.getString(0))));
                                SharedEntries.checkLimit(request, entries);
                            }));
        }

        /** Listing 6 line 1 / Listing 7 line 3: adds our cell to the queue row (also refreshes its TTL). */
        CompletionStage<Void> enqueueAsync() {
            queued = true;
            long sent = ticker.read();
            return calls.send(statements.enqueue.bind(key, ticket, ttl), "adding to the queue")
                    .thenRun(() -> queueWrittenAt = sent);
        }

        /**
         * Learns the queue's low-water mark when this backend knows none for the key yet (a read of the static
         * column only, which steps over no tombstone): queue reads then start past it.
         */
        CompletionStage<Void> learnMarkAsync() {
            if (!mark.isEmpty()) {
                return DONE;
            }
            return calls.send(statements.readMark.bind(key), "reading the queue's low-water mark")
                    .thenAccept(result -> {
                        Row row = result.one();
                        raiseMark(row == null ? null : row.getString(0));
                    });
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
        CompletionStage<Integer> placeAsync() {
            return calls.sendForRows(statements.readQueue.bind(key, mark, queueReadLimit()), "reading the queue")
                    .thenApply(this::placeIn);
        }

        private int placeIn(List<Row> rows) {
            for (Row row : rows) {
                raiseMark(row.getString(1));
            }
            if (ticket.compareTo(mark) <= 0) {
                return BELOW_MARK;
            }
            int ahead = 0;
            List<String> entriesAhead = new ArrayList<>();
            for (Row row : rows) {
                String other = row.getString(0);
                if (other.compareTo(mark) <= 0) {
                    continue;
                }
                int order = other.compareTo(ticket);
                if (order == 0) {
                    if (request.exclusive()) {
                        return ahead;
                    }
                    // A shared request's place is 0 once the generalized grant rule admits it behind those ahead.
                    return SharedEntries.grantable(request, entriesAhead) ? 0 : Math.max(1, ahead);
                }
                if (order > 0) {
                    return GONE;
                }
                ahead++;
                entriesAhead.add(entry(other));
            }
            return rows.size() < queueReadLimit() ? GONE : Integer.MAX_VALUE;
        }

        /**
         * Our ticket is at or below the low-water mark: reads no longer see it. Deletes the cell and queues again with
         * a ticket past the mark (fairness yields to the clock skew that caused it; exclusion never rests on the
         * queue).
         */
        private CompletionStage<Void> reticketAsync() {
            return calls.send(statements.dequeue.bind(key, ticket), "deleting the queue cell")
                    .thenCompose(deleted -> {
                        ticket = QueueAlgorithm.ticket(Math.max(time.ticketMicros(), micros(mark) + 1), entry);
                        return enqueueAsync();
                    });
        }

        /** {@link #placeAsync()}, after queueing again if our cell is gone or below the mark. */
        CompletionStage<Integer> placeRequeuedAsync() {
            return placeAsync().thenCompose(place -> {
                if (place == BELOW_MARK) {
                    return reticketAsync().thenCompose(v -> placeAsync());
                }
                if (place == GONE) {
                    // our cell expired while we were suspended: put it back, same ticket
                    return enqueueAsync().thenCompose(v -> placeAsync());
                }
                return CompletableFuture.completedFuture(place);
            });
        }

        /**
         * Listing 6 lines 3-8: writes our owner cell (and refreshes our queue cell's TTL in the same round trip),
         * reads the owner row and keeps the cell only if it is alone there.
         */
        CompletionStage<Optional<CassandraLease>> claimAsync() {
            long sent = ticker.read();
            return writeOwnerAsync()
                    .thenCompose(v -> ownerRowHoldsOnlyUsAsync())
                    .thenCompose(alone -> alone
                            ? CompletableFuture.completedFuture(Optional.of(new CassandraLease(
                                    request.key(),
                                    key,
                                    entry,
                                    request.exclusive(),
                                    request.ownerId(),
                                    ticket,
                                    slot,
                                    request.leaseTime(),
                                    OptionalLong.empty(),
                                    validity.until(sent, request.leaseTime()),
                                    request.lossListener())))
                            : withdrawClaimAsync().thenApply(v -> Optional.<CassandraLease>empty()));
        }

        /**
         * Listing 6 line 3. Both cells get the TTL of a grant, the lease plus the lock-delay: a holder that crashes
         * right after keeps the key that long, and its queue cell stays first as long as its owner cell (a waiter's
         * keep-alive writes its queue cell back with the lease's TTL).
         */
        CompletionStage<Void> writeOwnerAsync() {
            claimed = true;
            long sent = ticker.read();
            return calls.sendAll(
                            "writing the owner cell",
                            statements.enqueue.bind(key, ticket, heldTtl),
                            statements.writeOwner.bind(key, slot, entry, heldTtl))
                    .thenRun(() -> queueWrittenAt = sent);
        }

        /** Listing 6 line 4 (Lemma 1: of two concurrent claimers, at least one sees both cells). */
        CompletionStage<Boolean> ownerRowHoldsOnlyUsAsync() {
            // Rows are keyed by slot; concurrent claimers hold different slots, so each wrote its own row.
            if (request.kind() != LockKind.LOCK) {
                return readSharedOwnersAsync()
                        .thenApply(owners -> owners.contains(entry) && SharedEntries.admits(request, entry, owners));
            }
            return calls.sendForRows(statements.readOwners.bind(key), "reading the owner row")
                    .thenApply(owners ->
                            owners.size() == 1 && owners.get(0).getString(0).equals(request.ownerId()));
        }

        /** Listing 6 line 7. */
        CompletionStage<Void> withdrawClaimAsync() {
            return calls.send(statements.deleteOwner.bind(key, slot), "deleting the owner cell")
                    .thenRun(() -> claimed = false);
        }

        /** Keeps the queue cell alive while waiting: rewrites it once a third of the lease has passed. */
        private CompletionStage<Void> keepAliveIfDueAsync() {
            return ticker.read() - queueWrittenAt >= keepAliveNanos ? enqueueAsync() : DONE;
        }

        /**
         * One pass of Listing 6's loop: enqueue the first time, learn our place, claim when first, keep our queue cell
         * alive otherwise.
         */
        CompletionStage<Poll> pollAsync() {
            CompletionStage<Void> inQueue = queued
                    ? DONE
                    : learnMarkAsync().thenCompose(v -> checkLimitAsync()).thenCompose(v -> enqueueAsync());
            return inQueue.thenCompose(v -> placeRequeuedAsync()).thenCompose(place -> {
                if (place == 0) {
                    if (ownerAhead == 0) {
                        return claimFirstAsync();
                    }
                    // Our last claim found another owner: a claimer that withdraws within a round trip, or a holder
                    // whose ticket is later than ours (our clock behind, or a pause between taking the time and
                    // writing the ticket). Read the owner row before writing ours again, so that a long hold costs
                    // a read per poll, not a write and a tombstone (untilNextPoll backs off meanwhile).
                    return ownerRowFreeForUsAsync().thenCompose(free -> {
                        if (free) {
                            return claimFirstAsync();
                        }
                        ownerAhead++;
                        return keepAliveIfDueAsync().thenApply(w -> new Poll(Optional.empty(), 0));
                    });
                }
                ownerAhead = 0;
                // A claim that failed before it learned the owner row may have left our owner cell; we are not first
                // now, so withdraw it, or the first waiter finds two cells at every claim until its TTL.
                CompletionStage<Void> strayClaim = claimed ? withdrawClaimAsync() : DONE;
                return strayClaim
                        .thenCompose(w -> keepAliveIfDueAsync())
                        .thenApply(w -> new Poll(Optional.empty(), place));
            });
        }

        /** Listing 6 lines 3-8 from the head of the queue; a refusal counts as another owner ahead of us. */
        private CompletionStage<Poll> claimFirstAsync() {
            return claimAsync().thenApply(lease -> {
                ownerAhead = lease.isPresent() ? 0 : ownerAhead + 1;
                return new Poll(lease, 0);
            });
        }

        /**
         * A shared space's owner row, up to one cell more than the request's bound: the whole row whenever it admits
         * the request.
         */
        private CompletionStage<List<String>> readSharedOwnersAsync() {
            return calls.sendForRows(
                            statements.readOwnersUpTo.bind(key, SharedEntries.bound(request) + 1),
                            "reading the owner row")
                    .thenApply(QueueAlgorithm::owners);
        }

        /** Whether the owner row holds no cell but possibly ours (a read only); in a shared space, admits us. */
        private CompletionStage<Boolean> ownerRowFreeForUsAsync() {
            if (request.kind() != LockKind.LOCK) {
                return readSharedOwnersAsync().thenApply(owners -> SharedEntries.admits(request, entry, owners));
            }
            return calls.sendForRows(statements.readOwners.bind(key), "reading the owner row")
                    .thenApply(owners -> owners.isEmpty()
                            || (owners.size() == 1 && owners.get(0).getString(0).equals(request.ownerId())));
        }

        /**
         * How long to wait before the next poll from {@code place}: paced by the queue ({@link #pacedPollInterval}),
         * but never past the queue cell's keep-alive (a waiter polling slower than its TTL must not lose its place),
         * and not sooner than {@code pollMin} or a quarter of the keep-alive period, whichever is shorter (a keep-alive
         * that keeps failing does not turn into a busy loop).
         */
        long untilNextPoll(int place) {
            long paced = pacedPollInterval(place, pace(place));
            if (place == 0 && ownerAhead > 1) {
                // First in the queue, yet another owner holds: pollMin doubled per poll that found it, up to pollMax
                // (the first retry stays at pollMin: a concurrent claimer withdraws within a round trip).
                paced = pollMinNanos << Math.min(ownerAhead - 1, 20);
                paced = paced <= 0 || paced > pollMaxNanos ? pollMaxNanos : paced;
            }
            long keepAlive = queueWrittenAt + keepAliveNanos - ticker.read();
            return Math.max(Math.min(pollMinNanos, keepAliveNanos / 4), Math.min(paced, keepAlive));
        }

        /** Measures how fast the queue advances (a running mean of the time per place moved up); returns it. */
        private long pace(int place) {
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

        /** Starts Listing 6's loop: enqueue once, then poll until first and alone in the owner row, or the deadline. */
        PollingAcquisition<CassandraLease> waitFor(Deadline deadline) {
            return queueAcquisition(deadline).start();
        }

        private QueueAcquisition queueAcquisition(Deadline deadline) {
            return new QueueAcquisition(this, QueueAlgorithm.this, calls, wakeUps, polls, deadline, outageLimit);
        }

        /** Listing 6 on the calling thread: {@link #waitFor}, interrupted by interrupting the thread. */
        Optional<CassandraLease> await(Deadline deadline) throws InterruptedException {
            return queueAcquisition(deadline).awaitHere();
        }

        /** Listing 7: one pass, retrying lines 4-10 only while first in the queue, for a short while. */
        Optional<CassandraLease> tryOnce() {
            boolean granted = false;
            try {
                CassandraCalls.join(learnMarkAsync());
                CassandraCalls.join(checkLimitAsync());
                CassandraCalls.join(enqueueAsync());
                long start = ticker.read();
                while (CassandraCalls.join(placeRequeuedAsync()) == 0) {
                    Optional<CassandraLease> lease = CassandraCalls.join(claimAsync());
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
                    CassandraCalls.join(withdrawAsync());
                }
            }
        }

        /**
         * Leaves nothing behind: deletes the owner cell and the queue cell this attempt may have written. Never fails
         * (a cell that could not be deleted runs out with its TTL, and is logged).
         */
        CompletionStage<Void> withdrawAsync() {
            CompletionStage<Void> owner;
            try {
                owner = claimed ? withdrawClaimAsync() : DONE;
            } catch (RuntimeException e) {
                owner = CompletableFuture.failedFuture(e);
            }
            return owner.handle((v, error) -> error)
                    .thenCompose(ownerFailure -> {
                        if (!queued) {
                            return CompletableFuture.completedFuture(ownerFailure);
                        }
                        return calls.send(statements.dequeue.bind(key, ticket), "deleting the queue cell")
                                .handle((deleted, error) -> {
                                    if (error == null) {
                                        queued = false;
                                    }
                                    return ownerFailure != null ? ownerFailure : error;
                                });
                    })
                    .thenAccept(failure -> {
                        if (failure != null) {
                            LOG.warn(
                                    "Could not withdraw from lock '{}' ({}); its cells expire with their TTL of {} s",
                                    request.key(),
                                    CassandraCalls.unwrap(failure).getMessage(),
                                    ttl);
                        }
                        slots.free(key, slot);
                    });
        }
    }

    /** {@link Attempt#placeAsync()}: our queue cell is gone. */
    static final int GONE = -1;

    /** {@link Attempt#placeAsync()}: our ticket is at or below the queue's low-water mark. */
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
