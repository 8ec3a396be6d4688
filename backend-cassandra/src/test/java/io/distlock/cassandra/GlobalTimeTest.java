package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.LockBackendException;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * GlobalTime on one node: Theorem 5, the two problems seed 000 leaves open (a replica far ahead, a stalled cell), the
 * updater in the background, the tickets it hands out, and the open-time check of a stand-alone time service.
 */
class GlobalTimeTest extends OneNodeFixture {

    /** Theorem 5: updaters whose clocks are seconds apart race on the cell; a reader never sees it go down. */
    @Test
    void globalTime_updatersSkewedBySeconds_neverDecreases_theorem5() throws Exception {
        long[] skewsSeconds = {-3, 0, 2, 5};
        List<GlobalTime> updaters = new ArrayList<>();
        for (long skew : skewsSeconds) {
            updaters.add(replica(
                    "theorem5", skewed(Duration.ofSeconds(skew)), Duration.ofMillis(50), Duration.ofSeconds(10), true));
        }
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (GlobalTime updater : updaters) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    updater.tick();
                }
            });
            threads.add(t);
            t.start();
        }
        GlobalTime reader = replica("theorem5", Clock.systemUTC(), Duration.ofSeconds(1), Duration.ofSeconds(1), false);
        long last = 0;
        int reads = 0;
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() < end) {
            long value = reader.readCell();
            assertThat(value).as("GlobalTime after %d reads", reads).isGreaterThanOrEqualTo(last);
            last = value;
            reads++;
        }
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        last = reader.readCell();
        // The replica 5 s ahead wrote last-write-wins maxima, bounded by the server's clock plus maxLead (10 s).
        long serverNow = Instant.now().toEpochMilli() * 1000;
        assertThat(last).isGreaterThan(serverNow + Duration.ofSeconds(3).toNanos() / 1000);

        // A replica whose read was stale writes a smaller value afterwards: the cell keeps the larger one.
        GlobalTime behind = updaters.get(0);
        behind.write(last - Duration.ofSeconds(7).toNanos() / 1000);
        assertThat(reader.readCell()).isEqualTo(last);
    }

    /**
     * Seed section 7: a replica whose clock ran far ahead, then died, would stall the cell for as long as it was
     * ahead. Bounded here by {@code timeMaxLead}: it writes at most that far beyond the server's clock, so a correct
     * replica takes the cell over within about that long.
     */
    @Test
    void globalTime_replicaTenMinutesAheadDies_othersAdvanceTheCellWithinMaxLead() throws Exception {
        Duration maxLead = Duration.ofSeconds(1);
        GlobalTime ahead = replica("ahead", skewed(Duration.ofMinutes(10)), Duration.ofMillis(500), maxLead, true);
        long written = ahead.tick();
        long serverNow = Instant.now().toEpochMilli() * 1000;
        assertThat(written).isLessThanOrEqualTo(serverNow + maxLead.toNanos() / 1000 + 500_000);
        // "ahead" dies. A correct replica advances the cell past it within maxLead plus a few periods.
        GlobalTime correct = replica("ahead", Clock.systemUTC(), Duration.ofMillis(500), maxLead, true);
        Deadlines.await(
                () -> correct.tick() > written,
                Duration.ofSeconds(5),
                () -> "GlobalTime stayed at " + written + " after the replica ahead stopped");
        // Its tickets are bounded the same way: a locker whose clock is ten minutes ahead queues at most maxLead
        // beyond the cell, not ten minutes behind everyone else.
        long ticket = ahead.ticketMicros();
        assertThat(ticket)
                .isLessThan(correct.seenMicros() + Duration.ofSeconds(3).toNanos() / 1000);
    }

    /**
     * The updater in the background: a tick every period, driven by its statements' answers; a failed tick does not
     * end the ticking, and {@code close()} does.
     */
    @Test
    void globalTime_inTheBackground_keepsTicking_pastAFailedTick_untilClosed() throws Exception {
        AtomicInteger ticks = new AtomicInteger(); // each tick reads the clock once, first thing
        Clock failsOnTicksTwoAndThree = new Clock() {
            @Override
            public Instant instant() {
                int tick = ticks.incrementAndGet();
                if (tick == 2 || tick == 3) {
                    throw new IllegalStateException("clock unreadable (test)");
                }
                return Instant.now();
            }

            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                throw new UnsupportedOperationException();
            }
        };
        GlobalTime updater =
                replica("background", failsOnTicksTwoAndThree, Duration.ofMillis(50), Duration.ofSeconds(1), true);
        GlobalTime reader =
                replica("background", Clock.systemUTC(), Duration.ofSeconds(1), Duration.ofSeconds(1), false);
        java.util.concurrent.ScheduledExecutorService scheduler =
                java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            updater.start(scheduler);
            long first = reader.readCell();
            assertThat(first).as("the cell after start()'s tick").isPositive();
            Deadlines.await(
                    () -> ticks.get() >= 12,
                    Duration.ofSeconds(10),
                    () -> "the updater stopped after " + ticks.get() + " ticks (ticks 2 and 3 failed)");
            assertThat(reader.readCell()).as("the cell after 12 ticks").isGreaterThan(first);

            updater.close();
            int atClose = ticks.get();
            Thread.sleep(500); // ten periods
            assertThat(ticks.get())
                    .as("ticks begun after close() (one may have been firing as it closed)")
                    .isLessThanOrEqualTo(atClose + 1);
        } finally {
            updater.close();
            scheduler.shutdownNow();
        }
    }

    /**
     * Granularity: within one period of the cell, tickets of two lockers interleaved in time come out in that order,
     * and a locker whose clock is behind never issues a ticket below the GlobalTime it has seen.
     */
    @Test
    void tickets_inOnePeriod_followArrivalOrder_andNeverGoBelowTheSeenGlobalTime() throws Exception {
        try (CassandraLockBackend a = open("timePeriod=10s", Duration.ofSeconds(5));
                CassandraLockBackend b = open("timePeriod=10s", Duration.ofSeconds(5));
                CassandraLockBackend slow = open(
                        "timePeriod=10s&timeService=external", Duration.ofSeconds(5), skewed(Duration.ofSeconds(-5)))) {
            long previous = 0;
            for (int i = 0; i < 50; i++) {
                GlobalTime t = (i % 2 == 0 ? a : b).time();
                long ticket = t.ticketMicros();
                assertThat(ticket).as("ticket %d", i).isGreaterThan(previous);
                previous = ticket;
            }
            long seen = slow.time().seenMicros();
            assertThat(seen).isPositive();
            assertThat(slow.time().ticketMicros()).isGreaterThanOrEqualTo(seen);
        }
    }

    /**
     * The GlobalTime cell stops advancing (a stand-alone service down, {@code timeService=external}): a locker that
     * keeps reading the same value still hands out tickets that follow its clock (at most {@code maxLead} beyond the
     * cell plus the time since the cell last advanced), instead of holding them at the stalled value plus {@code
     * maxLead}.
     */
    @Test
    void globalTime_cellStalls_ticketsOfAReaderKeepFollowingTheClock() throws Exception {
        String row = "stalls-" + UUID.randomUUID().toString().substring(0, 8);
        GlobalTime service = replica(row, Clock.systemUTC(), Duration.ofSeconds(1), Duration.ofMillis(200), true);
        GlobalTime reader = replica(row, Clock.systemUTC(), Duration.ofSeconds(1), Duration.ofMillis(200), false);
        service.tick(); // the service's last write, then it dies
        reader.tick();
        long first = reader.ticketMicros();
        long start = System.nanoTime();
        while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2)) {
            reader.tick(); // reads the same value every period
            Thread.sleep(100);
        }
        long later = reader.ticketMicros();
        assertThat(later - first)
                .as("ticket advance over 2 s of reading a stalled cell (micros)")
                .isGreaterThan(1_500_000L);
    }

    /**
     * With {@code timeService=external}, {@code open()} checks that a stand-alone service keeps the GlobalTime cell:
     * never written or stalled, it fails naming the service; once a replica writes it, it opens.
     */
    @Test
    void open_externalTimeService_cellNeverWrittenOrStalled_failsNamingTheService() {
        String keyspace = "distlock_time_check";
        session.execute("CREATE KEYSPACE IF NOT EXISTS " + keyspace + " WITH replication = "
                + "{'class': 'SimpleStrategy', 'replication_factor': 1}");
        String base = "cassandra://" + CASSANDRA.contactPointsString() + "/" + keyspace + "?localDatacenter="
                + CASSANDRA.localDatacenter() + "&createSchema=true&connectTimeout=60s";
        try {
            assertThatThrownBy(() ->
                            RemoteLockers.open(base + "&timeService=external").close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("never written")
                    .hasMessageContaining("lockctl time-service");
            long hourAgo = (System.currentTimeMillis() - 3_600_000L) * 1000L;
            session.execute(SimpleStatement.newInstance(
                    "UPDATE " + keyspace + "." + CassandraStatements.TIME_TABLE
                            + " USING TIMESTAMP ? SET micros = ? WHERE name = ?",
                    hourAgo,
                    hourAgo,
                    CassandraStatements.GLOBAL_TIME_ROW));
            assertThatThrownBy(() ->
                            RemoteLockers.open(base + "&timeService=external").close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("has not advanced")
                    .hasMessageContaining("lockctl time-service");
            try (TimeService service = TimeService.start(base)) {
                Deadlines.await(
                        () -> {
                            try {
                                RemoteLockers.open(base + "&timeService=external")
                                        .close();
                                return true;
                            } catch (LockBackendException e) {
                                return false;
                            }
                        },
                        Duration.ofSeconds(10),
                        () -> "a locker with timeService=external does not open while the service runs");
            }
        } finally {
            session.execute("DROP KEYSPACE IF EXISTS " + keyspace);
        }
    }

    /** A GlobalTime replica on row {@code row} of the time table, outside any locker ({@code updates}: it writes). */
    private static GlobalTime replica(String row, Clock clock, Duration period, Duration maxLead, boolean updates) {
        CassandraCalls calls = new CassandraCalls(session, "test", Duration.ofSeconds(20), Ticker.system());
        CassandraStatements statements = new CassandraStatements(
                session,
                session.getKeyspace().orElseThrow().asInternal(),
                com.datastax.oss.driver.api.core.DefaultConsistencyLevel.QUORUM,
                com.datastax.oss.driver.api.core.DefaultConsistencyLevel.SERIAL);
        return new GlobalTime(calls, statements, clock, Ticker.system(), period, maxLead, updates, row);
    }

    static Clock skewed(Duration offset) {
        return Clock.offset(Clock.system(ZoneOffset.UTC), offset);
    }
}
