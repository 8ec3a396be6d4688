package io.distlock.cassandra;

import com.datastax.oss.driver.api.core.cql.Row;
import io.distlock.LockBackendException;
import io.distlock.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 000 section 5.4: the GlobalTime cell, one replica of its updating service, and the ticket clock built on it.
 *
 * <p><b>Updating (Listing 8, Theorem 5).</b> Every period a replica reads the cell and, if its local time is larger,
 * writes its local time with {@code USING TIMESTAMP} equal to the value. The cell's value always equals its write
 * timestamp, and Cassandra keeps the write with the largest timestamp, so the value never decreases, whatever the
 * order in which replicas' writes arrive.
 *
 * <p><b>A replica clock far ahead (seed section 7).</b> A replica writes at most {@code maxLead} beyond the clock of
 * the Cassandra node that coordinated its read ({@code now()} of {@code system.local}): a replica whose clock ran ten
 * minutes ahead and then died leaves the cell at most {@code maxLead} ahead of the servers, so the others take it over
 * within {@code maxLead} instead of ten minutes.
 *
 * <p><b>Granularity (tickets).</b> A cell updated every 500 ms gives everyone inside one period the same time, and
 * ties are broken by owner id, which is not arrival order. Tickets therefore come from a hybrid logical clock: the
 * local clock, never below the last GlobalTime this replica has seen, never more than {@code maxLead} beyond it (plus
 * the time elapsed since it was seen), and strictly increasing within this process. Theorem 2's argument still holds:
 * once the cell passes a waiter's ticket (it advances with the replicas' clocks) and every locker has read it (within
 * one period), no later arrival can be queued ahead of that waiter.
 *
 * <p>Thread-safe.
 */
final class GlobalTime implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GlobalTime.class);

    /**
     * After how many periods without an advance a cell kept by a stand-alone service counts as stalled: {@code open()}
     * refuses it, a running locker warns.
     */
    static final int STALE_PERIODS = 10;

    private final CassandraCalls calls;
    private final CassandraStatements statements;
    private final Clock clock;
    private final Ticker ticker;
    private final Duration period;
    private final long maxLeadMicros;
    private final boolean updates;
    private final String row;

    private long seenGlobalMicros;
    private long seenAtNanos;
    private long lastTicketMicros;
    private ScheduledExecutorService scheduler;
    private ScheduledFuture<?> task;
    private boolean closed;
    private volatile boolean failing;
    private boolean stalled; // a read-only replica found the cell stalled (warned once)

    /**
     * @param updates whether this replica writes the cell (Listing 8) or only reads it (a stand-alone service runs)
     */
    GlobalTime(
            CassandraCalls calls,
            CassandraStatements statements,
            Clock clock,
            Ticker ticker,
            Duration period,
            Duration maxLead,
            boolean updates) {
        this(calls, statements, clock, ticker, period, maxLead, updates, CassandraStatements.GLOBAL_TIME_ROW);
    }

    /** As above, on the cell of row {@code row} instead of the one every locker uses (for tests). */
    GlobalTime(
            CassandraCalls calls,
            CassandraStatements statements,
            Clock clock,
            Ticker ticker,
            Duration period,
            Duration maxLead,
            boolean updates,
            String row) {
        this.row = row;
        this.calls = calls;
        this.statements = statements;
        this.clock = clock;
        this.ticker = ticker;
        this.period = period;
        this.maxLeadMicros = toMicros(maxLead);
        this.updates = updates;
        this.seenAtNanos = ticker.read();
    }

    /**
     * Runs {@link #tick()} once now (failing if the store cannot be read), then a tick one period after the previous
     * one answered, fired on {@code scheduler}. A tick waits on no thread: its statements' answers drive it.
     */
    void start(ScheduledExecutorService scheduler) {
        tick(); // not under this monitor: the tick's callbacks take it on driver threads
        synchronized (this) {
            this.scheduler = scheduler;
            scheduleNextTick();
        }
    }

    private synchronized void scheduleNextTick() {
        if (closed || scheduler.isShutdown()) {
            return;
        }
        task = scheduler.schedule(this::tickInBackground, period.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void tickInBackground() {
        synchronized (this) {
            if (closed) {
                return; // fired as close() cancelled it: its session may be closing
            }
        }
        CompletionStage<Long> ticking;
        try {
            ticking = tickAsync();
        } catch (RuntimeException e) {
            ticking = CompletableFuture.failedFuture(e); // counted as a failed tick: the next one is still scheduled
        }
        ticking.whenComplete((value, error) -> {
            synchronized (this) {
                if (closed) {
                    return; // a tick cut short by close() is no failure
                }
            }
            if (error == null && failing) {
                failing = false;
                LOG.info("GlobalTime is readable again through {}", calls);
            } else if (error != null && !failing) {
                failing = true;
                LOG.warn(
                        "GlobalTime update failed (tickets keep the local clock meanwhile): {}",
                        CassandraCalls.unwrap(error).toString());
            }
            if (error == null && !updates) {
                warnIfStalled();
            }
            scheduleNextTick();
        });
    }

    /** A read-only replica: warns once when the cell stops advancing, and once when it advances again. */
    private synchronized void warnIfStalled() {
        long still = ticker.read() - seenAtNanos;
        boolean now = still > period.multipliedBy(STALE_PERIODS).toNanos();
        if (now && !stalled) {
            LOG.warn(
                    "The GlobalTime cell has not advanced for {} ms: is the stand-alone time service running?"
                            + " Tickets follow this locker's clock meanwhile ({})",
                    still / 1_000_000L,
                    calls);
        } else if (!now && stalled) {
            LOG.info("The GlobalTime cell advances again ({})", calls);
        }
        stalled = now;
    }

    /**
     * Listing 8 once, waiting for it: see {@link #tickAsync()}.
     *
     * @return the value the cell holds as far as this replica knows
     */
    long tick() {
        return CassandraCalls.join(tickAsync());
    }

    /**
     * Listing 8 once: reads the cell and, if this replica updates and its local time is larger, writes the local time
     * (bounded by the coordinator's clock plus {@code maxLead}) with that value as the write timestamp.
     *
     * @return the value the cell holds as far as this replica knows, once the tick's statements have answered
     */
    CompletionStage<Long> tickAsync() {
        long local = toMicros(clock.instant());
        return readCellAsync().thenCompose(global -> {
            observe(global);
            if (!updates || local <= global) {
                return CompletableFuture.completedFuture(global);
            }
            return readServerMicrosAsync().thenCompose(serverMicros -> {
                long value = Math.min(local, serverMicros + maxLeadMicros);
                if (value <= global) {
                    return CompletableFuture.completedFuture(global);
                }
                return writeAsync(value).thenApply(written -> {
                    observe(value);
                    return value;
                });
            });
        });
    }

    /** Listing 8 line 4: the cell gets {@code value} with write timestamp {@code value}. */
    void write(long valueMicros) {
        CassandraCalls.join(writeAsync(valueMicros));
    }

    private CompletionStage<?> writeAsync(long valueMicros) {
        return calls.send(statements.writeGlobalTime.bind(valueMicros, valueMicros, row), "updating GlobalTime");
    }

    /** The cell's value at the read consistency; 0 while it was never written. */
    long readCell() {
        return CassandraCalls.join(readCellAsync());
    }

    private CompletionStage<Long> readCellAsync() {
        return calls.send(statements.readGlobalTime.bind(this.row), "reading GlobalTime")
                .thenApply(result -> {
                    Row row = result.one();
                    return row == null || row.isNull(0) ? 0L : row.getLong(0);
                });
    }

    private CompletionStage<Long> readServerMicrosAsync() {
        return calls.send(statements.readServerTime.bind(), "reading the server's clock")
                .thenApply(result -> {
                    Row row = result.one();
                    if (row == null) {
                        throw new LockBackendException("Cassandra returned no row for system.local reading its clock");
                    }
                    return row.getLong(0) * 1000L;
                });
    }

    /**
     * Records a value of the cell. The time it was seen moves only when the value grows: a cell that stopped (an
     * external service down) then lets tickets follow the local clock by the time elapsed since it last advanced,
     * instead of holding them at the stalled value plus {@code maxLead}.
     */
    private synchronized void observe(long globalMicros) {
        if (globalMicros > seenGlobalMicros) {
            seenGlobalMicros = globalMicros;
            seenAtNanos = ticker.read();
        }
    }

    /**
     * Checks, once, that somebody keeps the cell: it was written, and its value is at most {@code maxAge} behind the
     * clock of the Cassandra node that coordinates the read. For lockers that only read the cell ({@code
     * timeService=external}): without the stand-alone service their tickets would lose the cell's ordering.
     *
     * @throws LockBackendException naming the service when the cell was never written or has stalled, or when the
     *     store cannot be read
     */
    void requireAlive(Duration maxAge) {
        long global = readCell();
        long serverMicros = CassandraCalls.join(readServerMicrosAsync());
        String remedy = "; with " + CassandraLockOptions.TIME_SERVICE
                + "=external lockers only read it: start the stand-alone GlobalTime service (lockctl time-service"
                + " --store <uri>, or TimeService.start(uri)) for this keyspace, or open with "
                + CassandraLockOptions.TIME_SERVICE + "=embedded";
        if (global == 0) {
            throw new LockBackendException("The GlobalTime cell (" + CassandraStatements.TIME_TABLE + ", row '" + row
                    + "') at " + calls.where() + " was never written" + remedy);
        }
        long behindMillis = (serverMicros - global) / 1000L;
        if (behindMillis > maxAge.toMillis()) {
            throw new LockBackendException("The GlobalTime cell (" + CassandraStatements.TIME_TABLE + ", row '" + row
                    + "') at " + calls.where() + " has not advanced for " + behindMillis
                    + " ms by the server's clock (at most " + maxAge.toMillis() + " ms allowed)" + remedy);
        }
        observe(global);
    }

    /** The largest GlobalTime this replica has read or written. */
    synchronized long seenMicros() {
        return seenGlobalMicros;
    }

    /**
     * The time of a new ticket (seed 000 Listing 5, line 1): the hybrid logical clock described above, strictly
     * increasing in this process.
     */
    synchronized long ticketMicros() {
        long sinceSeen = Math.max(0, (ticker.read() - seenAtNanos) / 1000L);
        long physical = Math.min(toMicros(clock.instant()), seenGlobalMicros + sinceSeen + maxLeadMicros);
        long t = Math.max(physical, seenGlobalMicros);
        t = Math.max(t, lastTicketMicros + 1);
        lastTicketMicros = t;
        return t;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (task != null) {
            task.cancel(false);
        }
    }

    /**
     * Closes this replica and stops {@code scheduler}, the thread its ticks fire on, waiting for a tick that fired
     * already ({@link CassandraCalls#stopBeforeTheSessionCloses}): a tick's read sent as the session closed made Netty
     * log an ERROR.
     */
    void stop(ScheduledExecutorService scheduler) {
        close();
        CassandraCalls.stopBeforeTheSessionCloses(scheduler);
    }

    private static long toMicros(Instant instant) {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000L);
    }

    private static long toMicros(Duration d) {
        return d.toNanos() / 1000L;
    }
}
