package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.LockBackendException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Every CQL statement of the backend, in one place: the schema and the prepared statements of the lock path, the
 * legacy algorithm, the GlobalTime cell and the fencing counter. Table names are fixed; each
 * statement names its keyspace, so that a session set to another keyspace (or none) runs them too.
 */
final class CassandraStatements {

    /** Seed 000 Listing 5: a lock's queue row; the clustering column is the ticket (20-digit micros + owner id). */
    static final String QUEUE_TABLE = "distlock_queue";
    /** Seed 000 section 5: a lock's owner ("main") row; the clustering column is the owner id. */
    static final String OWNER_TABLE = "distlock_owner";
    /** Seed 000 Listing 8: the one GlobalTime cell. */
    static final String TIME_TABLE = "distlock_time";
    /** Fencing counters, one partition per lock, written only with lightweight transactions. */
    static final String FENCE_TABLE = "distlock_fence";
    /** Seed 000 section 4: the legacy algorithm's main table. */
    static final String LEGACY_MAIN_TABLE = "distlock_legacy_main";
    /** Seed 000 section 4: the legacy algorithm's shadow table. */
    static final String LEGACY_SHADOW_TABLE = "distlock_legacy_shadow";
    /**
     * Release requests ({@code RemoteLocker.requestRelease}): one clustering row per request, under the holder's
     * partition and owner cell value, written with a TTL and read by the holder at each renewal. Optional: a keyspace
     * made before it opens without release requests ({@link #OPTIONAL_TABLES}).
     */
    static final String RELEASE_TABLE = "distlock_release";

    /** The tables every algorithm may use. */
    static final List<String> TABLES = List.of(
            QUEUE_TABLE, OWNER_TABLE, TIME_TABLE, FENCE_TABLE, LEGACY_MAIN_TABLE, LEGACY_SHADOW_TABLE, RELEASE_TABLE);

    /**
     * The tables a keyspace may lack when opened without {@code createSchema=true}: the backend then opens without what
     * they serve (a keyspace whose tables an older version made, which the locker must not refuse).
     */
    static final List<String> OPTIONAL_TABLES = List.of(RELEASE_TABLE);

    /** The schema, idempotent; shown in docs/cassandra.md. */
    static final List<String> SCHEMA = List.of(
            "CREATE TABLE IF NOT EXISTS " + QUEUE_TABLE
                    + " (lock_id text, ticket text, low text static, PRIMARY KEY (lock_id, ticket))",
            "CREATE TABLE IF NOT EXISTS " + OWNER_TABLE
                    + " (lock_id text, slot text, owner text, PRIMARY KEY (lock_id, slot))",
            "CREATE TABLE IF NOT EXISTS " + TIME_TABLE + " (name text PRIMARY KEY, micros bigint)",
            "CREATE TABLE IF NOT EXISTS " + FENCE_TABLE + " (lock_id text PRIMARY KEY, last_token bigint)",
            "CREATE TABLE IF NOT EXISTS " + LEGACY_MAIN_TABLE
                    + " (lock_id text, owner text, PRIMARY KEY (lock_id, owner))",
            "CREATE TABLE IF NOT EXISTS " + LEGACY_SHADOW_TABLE
                    + " (lock_id text, owner text, PRIMARY KEY (lock_id, owner))",
            "CREATE TABLE IF NOT EXISTS " + RELEASE_TABLE
                    + " (lock_id text, owner text, request text, PRIMARY KEY (lock_id, owner, request))");

    /**
     * The tables whose cells a release or a withdrawn attempt deletes: their tombstones stay {@code gc_grace_seconds}
     * (the fencing counter and the time cell are never deleted).
     */
    static final List<String> DELETED_FROM = List.of(QUEUE_TABLE, OWNER_TABLE, LEGACY_MAIN_TABLE, LEGACY_SHADOW_TABLE);

    /**
     * The {@code i}-th statement of {@link #SCHEMA}, its table named in {@code keyspace} (a CQL identifier); a table
     * of {@link #DELETED_FROM} keeps tombstones {@code gcGraceSeconds} (the option {@code keyRetention}).
     */
    static String createTable(int i, String keyspace, int gcGraceSeconds) {
        String cql = SCHEMA.get(i).replace("IF NOT EXISTS ", "IF NOT EXISTS " + keyspace + ".");
        return DELETED_FROM.contains(TABLES.get(i)) ? cql + " WITH gc_grace_seconds = " + gcGraceSeconds : cql;
    }

    /**
     * The columns each table must have (a table of an older schema lacks some): the queue's low-water mark and the
     * owner row's slots.
     */
    static final java.util.Map<String, List<String>> REQUIRED_COLUMNS =
            java.util.Map.of(QUEUE_TABLE, List.of("ticket", "low"), OWNER_TABLE, List.of("slot", "owner"));

    /**
     * How long the queue's low-water mark outlives the last release of its lock unless told ({@code keyRetention}):
     * Cassandra's default {@code gc_grace_seconds} (10 days), after which compaction may purge the tombstones the mark
     * lets reads skip.
     */
    static final int MARK_TTL_SECONDS = 864_000;

    /** The GlobalTime cell's row key (tests use others, to run several cells side by side). */
    static final String GLOBAL_TIME_ROW = "global";

    final Cql enqueue;
    final Cql readQueue;
    final Cql readMark;
    final Cql dequeue;
    final Cql raiseMark;
    final Cql writeOwner;
    final Cql readOwners;
    final Cql readOwnersUpTo;
    final Cql readOwner;
    final Cql deleteOwner;
    final Cql inspectOwners;
    final Cql scanOwners;
    /** Null when the keyspace has no {@link #RELEASE_TABLE}. */
    final Cql writeReleaseRequest;
    /** Null when the keyspace has no {@link #RELEASE_TABLE}. */
    final Cql readReleaseRequests;

    final Cql legacyReadMain;
    final Cql legacyReadMainOwner;
    final Cql legacyWriteMain;
    final Cql legacyDeleteMain;
    final Cql legacyWriteShadow;
    final Cql legacyReadShadow;
    final Cql legacyDeleteShadow;
    final Cql legacyInspectMain;

    final Cql readGlobalTime;
    final Cql readServerTime;
    final Cql writeGlobalTime;

    final Cql readFence;
    final Cql readFenceHint;
    final Cql createFence;
    final Cql advanceFence;

    /** The keyspace, as a CQL identifier, that qualifies every table name. */
    private final String keyspace;

    CassandraStatements(CqlSession session, String keyspace, ConsistencyLevel consistency, ConsistencyLevel serial) {
        this(session, keyspace, consistency, serial, MARK_TTL_SECONDS, false);
    }

    /**
     * The statements, the low-water mark written with TTL {@code markTtlSeconds}; those of release requests only if
     * {@code releaseTable} (the keyspace has {@link #RELEASE_TABLE}: a statement on a missing table cannot be prepared).
     */
    CassandraStatements(
            CqlSession session,
            String keyspace,
            ConsistencyLevel consistency,
            ConsistencyLevel serial,
            int markTtlSeconds,
            boolean releaseTable) {
        this.keyspace = CqlIdentifier.fromInternal(keyspace).asCql(true);
        enqueue = prepare(
                session,
                "INSERT INTO " + in(QUEUE_TABLE) + " (lock_id, ticket) VALUES (?, ?) USING TTL ?",
                consistency,
                serial);
        // The queue from just past its low-water mark (the static column, returned with every row).
        readQueue = prepare(
                session,
                "SELECT ticket, low FROM " + in(QUEUE_TABLE) + " WHERE lock_id = ? AND ticket > ? LIMIT ?",
                consistency,
                serial);
        // Only the static column: reads the partition's static row, none of its clustering rows or tombstones.
        readMark = prepare(session, "SELECT low FROM " + in(QUEUE_TABLE) + " WHERE lock_id = ?", consistency, serial);
        dequeue = prepare(
                session, "DELETE FROM " + in(QUEUE_TABLE) + " WHERE lock_id = ? AND ticket = ?", consistency, serial);
        // The write timestamp is the released ticket's time: last-write-wins keeps the largest ticket (ties of time
        // go to the larger value, i.e. the larger ticket), whatever order releases arrive in.
        raiseMark = prepare(
                session,
                "UPDATE " + in(QUEUE_TABLE) + " USING TIMESTAMP ? AND TTL " + markTtlSeconds
                        + " SET low = ? WHERE lock_id = ?",
                consistency,
                serial);
        writeOwner = prepare(
                session,
                "INSERT INTO " + in(OWNER_TABLE) + " (lock_id, slot, owner) VALUES (?, ?, ?) USING TTL ?",
                consistency,
                serial);
        readOwners = prepare(
                session, "SELECT owner FROM " + in(OWNER_TABLE) + " WHERE lock_id = ? LIMIT 2", consistency, serial);
        // A shared space's owner row: up to a bound, so that a claimer reads the whole row or knows it is full.
        readOwnersUpTo = prepare(
                session, "SELECT owner FROM " + in(OWNER_TABLE) + " WHERE lock_id = ? LIMIT ?", consistency, serial);
        readOwner = prepare(
                session,
                "SELECT owner FROM " + in(OWNER_TABLE) + " WHERE lock_id = ? AND slot = ?",
                consistency,
                serial);
        deleteOwner = prepare(
                session, "DELETE FROM " + in(OWNER_TABLE) + " WHERE lock_id = ? AND slot = ?", consistency, serial);

        // Inspection (read-only): every owner cell of a partition with the seconds its TTL has left and when it was
        // last
        // written (for a release request's TTL); every owner cell
        // of the table (a scan, paged), for the listing of held keys.
        inspectOwners = prepare(
                session,
                "SELECT slot, owner, TTL(owner), WRITETIME(owner) FROM " + in(OWNER_TABLE) + " WHERE lock_id = ?",
                consistency,
                serial);
        scanOwners = prepare(session, "SELECT lock_id, owner FROM " + in(OWNER_TABLE), consistency, serial);

        // Release requests: a row per request under the holder's partition and owner cell value (ReleaseRequests).
        writeReleaseRequest = !releaseTable
                ? null
                : prepare(
                        session,
                        "INSERT INTO " + in(RELEASE_TABLE) + " (lock_id, owner, request) VALUES (?, ?, ?) USING TTL ?",
                        consistency,
                        serial);
        readReleaseRequests = !releaseTable
                ? null
                : prepare(
                        session,
                        "SELECT request FROM " + in(RELEASE_TABLE) + " WHERE lock_id = ? AND owner = ?",
                        consistency,
                        serial);

        legacyReadMain = prepare(
                session,
                "SELECT owner FROM " + in(LEGACY_MAIN_TABLE) + " WHERE lock_id = ? LIMIT 2",
                consistency,
                serial);
        legacyReadMainOwner = prepare(
                session,
                "SELECT owner FROM " + in(LEGACY_MAIN_TABLE) + " WHERE lock_id = ? AND owner = ?",
                consistency,
                serial);
        legacyWriteMain = prepare(
                session,
                "INSERT INTO " + in(LEGACY_MAIN_TABLE) + " (lock_id, owner) VALUES (?, ?) USING TTL ?",
                consistency,
                serial);
        legacyDeleteMain = prepare(
                session,
                "DELETE FROM " + in(LEGACY_MAIN_TABLE) + " WHERE lock_id = ? AND owner = ?",
                consistency,
                serial);
        legacyWriteShadow = prepare(
                session,
                "INSERT INTO " + in(LEGACY_SHADOW_TABLE) + " (lock_id, owner) VALUES (?, ?) USING TTL ?",
                consistency,
                serial);
        legacyReadShadow = prepare(
                session,
                "SELECT owner FROM " + in(LEGACY_SHADOW_TABLE) + " WHERE lock_id = ? LIMIT 2",
                consistency,
                serial);
        legacyDeleteShadow = prepare(
                session,
                "DELETE FROM " + in(LEGACY_SHADOW_TABLE) + " WHERE lock_id = ? AND owner = ?",
                consistency,
                serial);
        // The whole main row (a read of the holders; the lock path reads two cells at most).
        legacyInspectMain = prepare(
                session, "SELECT owner FROM " + in(LEGACY_MAIN_TABLE) + " WHERE lock_id = ?", consistency, serial);

        readGlobalTime =
                prepare(session, "SELECT micros FROM " + in(TIME_TABLE) + " WHERE name = ?", consistency, serial);
        readServerTime = prepare(
                session, "SELECT toUnixTimestamp(now()) AS server_ms FROM system.local", ConsistencyLevel.ONE, serial);
        // Seed 000 Listing 8 line 4: the write timestamp equals the value, so last-write-wins keeps the maximum.
        writeGlobalTime = prepare(
                session,
                "UPDATE " + in(TIME_TABLE) + " USING TIMESTAMP ? SET micros = ? WHERE name = ?",
                consistency,
                serial);

        readFence =
                prepare(session, "SELECT last_token FROM " + in(FENCE_TABLE) + " WHERE lock_id = ?", serial, serial);
        // A plain read, no Paxos round: only the first guess of a draw, which the conditional update then checks.
        readFenceHint = prepare(
                session, "SELECT last_token FROM " + in(FENCE_TABLE) + " WHERE lock_id = ?", consistency, serial);
        createFence = prepareConditional(
                session,
                "INSERT INTO " + in(FENCE_TABLE) + " (lock_id, last_token) VALUES (?, 1) IF NOT EXISTS",
                consistency,
                serial);
        advanceFence = prepareConditional(
                session,
                "UPDATE " + in(FENCE_TABLE) + " SET last_token = ? WHERE lock_id = ? IF last_token = ?",
                consistency,
                serial);
        awaitPrepared();
    }

    private final List<Cql> all = new ArrayList<>();

    /** {@code keyspace.table}. */
    private String in(String table) {
        return keyspace + "." + table;
    }

    /**
     * Sends one idempotent statement to be prepared; every statement is prepared in parallel, then awaited together.
     * Every statement but the fencing counter's lightweight transactions is idempotent: reads, deletes of a named cell,
     * and writes of a fixed value. A write or delete touches only this locker's own cells (its ticket, its slot, its owner
     * id), and nothing else is sent to them until the call returns, so a repeat (the driver gives it a later timestamp)
     * or a late copy of the first send cannot undo a later step; the mark and time cells carry their own timestamps.
     * The lease renewal's rewrite is the exception (a release may run meanwhile): see {@link Cql#bindNotResent}.
     * Marked so, the driver sends it again to the next node when the connection to a node dies with the request in
     * flight, and {@link CassandraCalls} after a replica timeout, instead of failing the lock call: one node of three may
     * die at any moment.
     */
    private Cql prepare(CqlSession session, String cql, ConsistencyLevel consistency, ConsistencyLevel serial) {
        return prepare(session, cql, consistency, serial, true);
    }

    /** A lightweight transaction: not idempotent (a repeat of an applied one answers "not applied"). */
    private Cql prepareConditional(
            CqlSession session, String cql, ConsistencyLevel consistency, ConsistencyLevel serial) {
        return prepare(session, cql, consistency, serial, false);
    }

    private Cql prepare(
            CqlSession session, String cql, ConsistencyLevel consistency, ConsistencyLevel serial, boolean idempotent) {
        Cql statement = new Cql(
                session.prepareAsync(SimpleStatement.newInstance(cql)).toCompletableFuture(),
                consistency,
                serial,
                idempotent);
        all.add(statement);
        return statement;
    }

    private void awaitPrepared() {
        for (Cql statement : all) {
            try {
                statement.prepared().join();
            } catch (CompletionException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                throw new LockBackendException("Cassandra could not prepare the lock statements: " + cause, cause);
            }
        }
    }

    /** A prepared statement with the consistency levels its executions use, and whether a repeat is harmless. */
    record Cql(
            CompletableFuture<PreparedStatement> prepared,
            ConsistencyLevel consistency,
            ConsistencyLevel serial,
            boolean idempotent) {

        /** Binds the values and sets the consistency levels and the idempotence. */
        BoundStatement bind(Object... values) {
            return prepared.join()
                    .bind(values)
                    .setConsistencyLevel(consistency)
                    .setSerialConsistencyLevel(serial)
                    .setIdempotent(idempotent);
        }

        /**
         * As {@link #bind}, but never sent twice by the driver: for the lease renewal's rewrite, which a release may
         * race (a resend stamped after the release's delete would bring the cells back until their TTL). It is sent
         * again only through the lease's fence ({@link CassandraCalls#rewrite}), never after the release.
         */
        BoundStatement bindNotResent(Object... values) {
            return bind(values).setIdempotent(false);
        }
    }
}
