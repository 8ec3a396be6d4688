package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Who holds a key, read from the lock tables at the backend's consistency (writes nothing, renews nothing), and
 * breaking a key by deleting its holders' cells, as an operator's CQL {@code DELETE} would.
 *
 * <p>For {@code queue}, a holder is an owner cell of the key's partition in one of its three spaces ({@link
 * SharedEntries}), its value the owner id, tagged {@code |W}, {@code |R} or {@code |PN} outside the lock's space:
 *
 * <ul>
 *   <li>{@code leaseEnds}: now plus {@code TTL(owner)}, the whole seconds the cell has left in the store (its TTL is
 *       the lease rounded up plus 1 s, so it ends up to 2 s after the lease the holder relies on);
 *   <li>{@code since}: empty. {@code WRITETIME(owner)} is the last renewal (each rewrites the cell), and the
 *       ticket's time is when the holder queued, not when it was granted;
 *   <li>{@code fencingToken} ({@code fencing=true}): for a lock or a writer, the last value of its partition's
 *       counter, read at the serial consistency: the holder's token, which it draws right after its grant (a look-up
 *       in the few milliseconds between the two shows its predecessor's); empty for readers and permits, whose
 *       several holders each drew one and the counter keeps only the last;
 *   <li>{@code waiting}: the queue cells past the low-water mark that are no holder's ticket.
 * </ul>
 *
 * <p>For {@code legacy}, a holder is a cell of the main row, which has primary-key columns only: Cassandra refuses
 * {@code TTL()} and {@code WRITETIME()} on them, so no lease end can be read; the legacy algorithm offers breaking a
 * key but no look-up ({@code Capabilities.Operation.BREAK} only).
 */
final class Inspection {

    private final CassandraCalls calls;
    private final CassandraStatements statements;
    private final Fencing fencing; // null when fencing is off
    private final boolean queue;
    private final Clock clock;

    Inspection(CassandraCalls calls, CassandraStatements statements, Fencing fencing, boolean queue, Clock clock) {
        this.calls = calls;
        this.statements = statements;
        this.fencing = fencing;
        this.queue = queue;
        this.clock = clock;
    }

    /**
     * The holders of {@code key} in its three spaces, in queue order within each, and how many wait: per space, its
     * owner row, its queue's low-water mark and its queue past the mark (9 reads), plus a serial read of the fencing
     * counter per exclusive holder when fencing is on.
     */
    LockState inspect(String key) {
        List<LockHolder> holders = new ArrayList<>();
        int waiting = 0;
        for (LockKind.Space space : LockKind.Space.values()) {
            Space read = read(space, key);
            holders.addAll(read.holders());
            waiting += read.waiting();
        }
        return new LockState(key, holders, OptionalInt.of(waiting));
    }

    /**
     * Every held key: one scan of the owner table (every partition it still keeps, held or not, with its tombstones,
     * paged), then {@link #inspect} per key that has a live owner cell. Keys whose cells all expired or were deleted
     * are not listed.
     */
    List<LockState> listHeld() {
        Set<String> keys = new TreeSet<>();
        for (Row row : calls.allRows(statements.scanOwners.bind(), "listing the owner cells")) {
            keys.add(SharedEntries.keyOf(row.getString(0)));
        }
        List<LockState> held = new ArrayList<>();
        for (String key : keys) {
            LockState state = inspect(key);
            if (state.held()) {
                held.add(state);
            }
        }
        return held;
    }

    /**
     * Deletes every holder's cells of {@code key}: for {@code queue}, per space, each holder's owner cell and then its
     * queue cell (so the next waiter finds itself first and the owner row empty at its next poll), waiters' cells
     * untouched; for {@code legacy}, the main row's cells. The holders are told at their next renewal, which finds the
     * owner cell gone.
     *
     * @return the holders whose cells were deleted, as {@link #inspect} shows them
     */
    List<LockHolder> breakLock(String key) {
        if (!queue) {
            return breakLegacy(key);
        }
        List<LockHolder> broken = new ArrayList<>();
        for (LockKind.Space space : LockKind.Space.values()) {
            Space read = read(space, key);
            if (read.holders().isEmpty()) {
                continue;
            }
            for (String slot : read.slots()) {
                calls.execute(statements.deleteOwner.bind(read.partition(), slot), "deleting a holder's owner cell");
            }
            for (String ticket : read.holderTickets()) {
                calls.execute(statements.dequeue.bind(read.partition(), ticket), "deleting a holder's queue cell");
            }
            broken.addAll(read.holders());
        }
        return broken;
    }

    private List<LockHolder> breakLegacy(String key) {
        List<LockHolder> broken = new ArrayList<>();
        for (Row row : calls.allRows(statements.legacyInspectMain.bind(key), "reading the main row")) {
            String owner = row.getString(0);
            broken.add(LockHolder.of(LockKind.LOCK, owner, Optional.empty(), Optional.empty(), token(key)));
            calls.execute(statements.legacyDeleteMain.bind(key, owner), "deleting a holder's main cell");
        }
        return broken;
    }

    /**
     * Asks every holder of {@code key} in its three spaces to let go: after the look-up, a row of {@link
     * CassandraStatements#RELEASE_TABLE} per holder under its partition and owner cell value, named by one random id
     * for this call. Each holder reads it at its next renewal ({@link QueueAlgorithm#renewalCheck}). A key with no
     * holder gets nothing; a holder that released meanwhile leaves a row no later holder reads (it is under the old
     * owner id, unique per acquisition) until its TTL ends ({@link #requestTtl}).
     *
     * @return the holders asked, as {@link #inspect} shows them
     */
    List<LockHolder> requestRelease(String key) {
        String request = UUID.randomUUID().toString();
        long nowMicros = clock.millis() * 1000;
        List<LockHolder> asked = new ArrayList<>();
        for (LockKind.Space space : LockKind.Space.values()) {
            Space read = read(space, key);
            for (Row owner : read.owners) {
                calls.execute(
                        statements.writeReleaseRequest.bind(
                                read.partition(), owner.getString(1), request, requestTtl(owner, nowMicros)),
                        "asking a holder to let go");
            }
            asked.addAll(read.holders());
        }
        return asked;
    }

    /**
     * A request's TTL: it must last until the holder's next renewal reads it. A renewal comes within a third of the
     * lease after the last rewrite of the owner cell, or the lease is lost by then (a holder whose renewals fail tries
     * until its validity ends, before its cell does). Its last rewrite may be just after this request (a renewal whose
     * read went just before), so the request outlives the owner cell's whole TTL from now: the seconds it has left plus
     * those since it was written (by the writer's clock, so at least twice what it has left), plus 2 s.
     */
    static int requestTtl(Row owner, long nowMicros) {
        long left = owner.isNull(2) ? Ttl.MAX_TTL_SECONDS / 2 : owner.getInt(2);
        long sinceWritten = owner.isNull(3) ? 0 : Math.max(0, (nowMicros - owner.getLong(3)) / 1_000_000);
        long total = Math.max(2 * left, left + sinceWritten);
        return (int) Math.min(Ttl.MAX_TTL_SECONDS, total + 2);
    }

    /** What one space of {@code key} holds: its owner cells (with their slots) and its queue. */
    private Space read(LockKind.Space space, String key) {
        String partition = SharedEntries.partition(kindIn(space), key);
        List<Row> owners = calls.allRows(statements.inspectOwners.bind(partition), "reading the owner row");
        // The queue from past its low-water mark, as waiters read it: the released tickets' tombstones lie below it.
        Row markRow = calls.execute(statements.readMark.bind(partition), "reading the queue's low-water mark")
                .one();
        String mark = markRow == null || markRow.isNull(0) ? "" : markRow.getString(0);
        List<String> tickets = new ArrayList<>();
        for (Row row :
                calls.allRows(statements.readQueue.bind(partition, mark, Integer.MAX_VALUE), "reading the queue")) {
            tickets.add(row.getString(0));
        }
        return new Space(space, partition, owners, tickets);
    }

    /** A kind whose space is {@code space}, for {@link SharedEntries#partition}. */
    private static LockKind kindIn(LockKind.Space space) {
        return switch (space) {
            case LOCK -> LockKind.LOCK;
            case READ_WRITE -> LockKind.READ;
            case SEMAPHORE -> LockKind.PERMIT;
        };
    }

    private OptionalLong token(String partition) {
        return fencing == null ? OptionalLong.empty() : fencing.last(partition);
    }

    /** One space of a key as read: its partition, owner cells (slot, entry, TTL left) and queue past the mark. */
    private final class Space {
        private final LockKind.Space space;
        private final String partition;
        private final List<Row> owners;
        private final List<String> tickets;
        private final List<LockHolder> holders;

        Space(LockKind.Space space, String partition, List<Row> owners, List<String> tickets) {
            this.space = space;
            this.partition = partition;
            this.owners = new ArrayList<>(owners);
            this.tickets = tickets;
            // Grant order where the queue shows it: by the holder's ticket (a holder whose ticket is gone comes last).
            this.owners.sort(Comparator.comparingInt(row -> {
                int at = queuePlace(row.getString(1));
                return at < 0 ? Integer.MAX_VALUE : at;
            }));
            this.holders = readHolders();
        }

        String partition() {
            return partition;
        }

        List<String> slots() {
            return owners.stream().map(row -> row.getString(0)).toList();
        }

        private Set<String> entries() {
            Set<String> entries = new HashSet<>();
            owners.forEach(row -> entries.add(row.getString(1)));
            return entries;
        }

        private int queuePlace(String entry) {
            for (int i = 0; i < tickets.size(); i++) {
                if (QueueAlgorithm.entry(tickets.get(i)).equals(entry)) {
                    return i;
                }
            }
            return -1;
        }

        /** The holders' queue cells. */
        List<String> holderTickets() {
            Set<String> entries = entries();
            return tickets.stream()
                    .filter(t -> entries.contains(QueueAlgorithm.entry(t)))
                    .toList();
        }

        /** The queue cells that are no holder's. */
        int waiting() {
            return tickets.size() - holderTickets().size();
        }

        List<LockHolder> holders() {
            return holders;
        }

        private List<LockHolder> readHolders() {
            Instant now = clock.instant();
            List<LockHolder> holders = new ArrayList<>(owners.size());
            for (Row row : owners) {
                String entry = row.getString(1);
                LockKind kind = SharedEntries.kindOf(space, entry);
                Optional<Instant> leaseEnds =
                        row.isNull(2) ? Optional.empty() : Optional.of(now.plusSeconds(row.getInt(2)));
                OptionalLong token =
                        kind == LockKind.LOCK || kind == LockKind.WRITE ? token(partition) : OptionalLong.empty();
                holders.add(
                        LockHolder.of(kind, SharedEntries.ownerIdOf(space, entry), Optional.empty(), leaseEnds, token));
            }
            return holders;
        }
    }
}
