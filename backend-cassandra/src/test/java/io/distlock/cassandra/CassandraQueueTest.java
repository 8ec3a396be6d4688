package io.distlock.cassandra;

import static io.distlock.cassandra.CassandraCalls.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.LockBackendException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.BackendConfig;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.CassandraCluster;
import io.distlock.testing.TcpProxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The backend's own tests on one node: what the kit cannot see from outside (the tables after every kind of failed
 * attempt, Listing 6's retry path, GlobalTime's Theorem 5 and the two problems seed 000 leaves open, the request
 * count).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CassandraQueueTest {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CassandraQueueTest.class);

    @RegisterExtension
    static final CassandraCluster CASSANDRA =
            CassandraCluster.builder().withNodes(1).build();

    private static CqlSession session;

    @BeforeAll
    static void schema() {
        // Creates the tables once; the session reads them back.
        try (LockBackend backend = open("", Duration.ofSeconds(5))) {
            assertThat(backend.capabilities().fair()).isTrue();
        }
        session = CASSANDRA.newSession();
    }

    @AfterAll
    static void closeSession() {
        if (session != null) {
            session.close();
        }
    }

    static String uri(String options) {
        return CassandraKitHooks.uri(CASSANDRA, options);
    }

    static CassandraLockBackend open(String options, Duration lease) {
        return open(options, lease, Clock.systemUTC());
    }

    static CassandraLockBackend open(String options, Duration lease, Clock clock) {
        return open(CASSANDRA, options, lease, Duration.ofSeconds(20), clock);
    }

    /** A backend on {@code cluster}'s keyspace with {@code options}, opened through the provider. */
    static CassandraLockBackend open(
            CassandraCluster cluster, String options, Duration lease, Duration connectTimeout, Clock clock) {
        String full = CassandraKitHooks.uri(cluster, options);
        URI bare = URI.create(full.substring(0, full.indexOf('?')));
        Map<String, String> map = new java.util.LinkedHashMap<>();
        for (String pair : full.substring(full.indexOf('?') + 1).split("&")) {
            map.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        }
        BackendConfig config = new BackendConfig(bare, map, lease, connectTimeout, Ticker.system(), clock);
        return (CassandraLockBackend) new CassandraLockBackendProvider().open(config);
    }

    static LockRequest request(String key, Duration lease) {
        return new LockRequest(key, UUID.randomUUID().toString(), lease, reason -> {});
    }

    /** The cells of {@code key} left in every lock table. */
    static List<String> cellsOf(String key) {
        return CassandraKitHooks.entries(session, key);
    }

    static String key(String name) {
        return "cq-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void failedAndFinishedAttempts_leaveNothingInTheTables() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key(algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease);
                    CassandraLockBackend b = open("algorithm=" + algorithm, lease)) {
                Lease held = a.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(cellsOf(key)).isNotEmpty();

                // A refused tryLock.
                assertThat(b.tryAcquire(request(key, lease))).isEmpty();
                // A wait that times out.
                assertThat(b.acquire(request(key, lease), Deadline.after(Duration.ofMillis(700), Ticker.system())))
                        .isEmpty();
                // A wait that is interrupted.
                AtomicReference<Throwable> outcome = new AtomicReference<>();
                CountDownLatch started = new CountDownLatch(1);
                Thread waiter = new Thread(() -> {
                    started.countDown();
                    try {
                        b.acquire(request(key, lease), Deadline.unbounded(Ticker.system()));
                    } catch (Throwable e) {
                        outcome.set(e);
                    }
                });
                long requestsBefore = b.storeRequests().orElseThrow();
                waiter.start();
                started.await();
                Deadlines.await(
                        () -> b.storeRequests().orElseThrow() >= requestsBefore + 3,
                        TestTimeouts.scaled(Duration.ofSeconds(10)),
                        () -> "the waiter sent nothing");
                waiter.interrupt();
                waiter.join(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis());
                assertThat(outcome.get()).isInstanceOf(InterruptedException.class);

                // Only the holder's cells are left.
                List<String> cells = cellsOf(key);
                assertThat(cells).allMatch(c -> c.contains(held.ownerId()), "only the holder's cells: " + cells);
                assertThat(a.release(held)).isTrue();
                assertThat(cellsOf(key)).isEmpty();
                assertThat(a.release(held)).isFalse();
            }
        }
    }

    /**
     * Listing 6 lines 3-8, forced: B's ticket is earlier than A's but B enqueues after A already saw itself first
     * (the delay between taking the time and writing the cell, seed section 5). Both write their owner cell, both see
     * two cells (Lemma 1), both withdraw; then B, first in the queue, takes the lock and A waits behind it.
     */
    @Test
    void listing6_twoOwnersBothBelievingFirst_bothWithdraw_thenEarlierTicketWins() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("retry");
        try (CassandraLockBackend backend = open("", lease)) {
            QueueAlgorithm queue = (QueueAlgorithm) backend.algorithm();
            LockRequest ra = request(key, lease);
            LockRequest rb = request(key, lease);
            long now = backend.time().ticketMicros();
            QueueAlgorithm.Attempt a = queue.new Attempt(ra, QueueAlgorithm.ticket(now + 1000, ra.ownerId()));
            QueueAlgorithm.Attempt b = queue.new Attempt(rb, QueueAlgorithm.ticket(now, rb.ownerId()));

            join(a.enqueueAsync());
            assertThat(join(a.placeAsync())).isZero();
            join(b.enqueueAsync());
            assertThat(join(b.placeAsync())).isZero();
            join(a.writeOwnerAsync());
            join(b.writeOwnerAsync());
            // Lemma 1: at least one sees both; here both do, as both wrote before either read.
            assertThat(join(a.ownerRowHoldsOnlyUsAsync())).isFalse();
            assertThat(join(b.ownerRowHoldsOnlyUsAsync())).isFalse();
            join(a.withdrawClaimAsync());
            join(b.withdrawClaimAsync());

            // Back to line 2: A is no longer first; B is, and is alone in the owner row.
            assertThat(join(a.placeAsync())).isEqualTo(1);
            Lease bLease = join(b.claimAsync()).orElseThrow();
            CompletableFuture<Optional<CassandraLease>> aWaits = CompletableFuture.supplyAsync(() -> {
                try {
                    return a.await(Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(30)), Ticker.system()));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(Deadlines.holdsFor(Duration.ofMillis(500), () -> !aWaits.isDone()))
                    .as("A waits behind B")
                    .isTrue();
            assertThat(backend.release(bLease)).isTrue();
            CassandraLease aLease = aWaits.get(30, TimeUnit.SECONDS).orElseThrow();
            assertThat(aLease.ownerId()).isEqualTo(ra.ownerId());
            assertThat(backend.release(aLease)).isTrue();
            assertThat(cellsOf(key)).isEmpty();
        }
    }

    /**
     * Every release and every withdrawn claim leaves tombstones in the lock's queue and owner rows. After {@code n}
     * acquisitions of one key by two backends, the reads of the lock path (traced by Cassandra) step over a bounded
     * number of them: the queue read starts past the low-water mark, the owner row holds one row per slot. The same
     * queue read from the head of the partition (the read without a mark) steps over every released ticket.
     */
    @Test
    void manyAcquisitions_lockPathReads_stepOverBoundedTombstones() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("tombstones");
        int n = 200;
        try (CassandraLockBackend a = open("", lease);
                CassandraLockBackend b = open("", lease)) {
            for (int i = 0; i < n; i++) {
                CassandraLockBackend backend = i % 2 == 0 ? a : b;
                Lease held = backend.acquire(
                                request(key, lease),
                                Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(30)), Ticker.system()))
                        .orElseThrow();
                assertThat(backend.release(held)).isTrue();
            }
            List<ExecutionInfo> traced = new java.util.concurrent.CopyOnWriteArrayList<>();
            b.calls().traceInto(traced);
            // An uncontended acquisition and release, then a wait behind a holder that times out.
            Lease own = b.acquire(request(key, lease), Deadline.after(Duration.ofSeconds(10), Ticker.system()))
                    .orElseThrow();
            assertThat(b.release(own)).isTrue();
            Lease held = a.tryAcquire(request(key, lease)).orElseThrow();
            assertThat(b.acquire(request(key, lease), Deadline.after(Duration.ofMillis(800), Ticker.system())))
                    .isEmpty();
            b.calls().traceInto(null);
            assertThat(a.release(held)).isTrue();

            Map<String, Long> most = new java.util.TreeMap<>();
            for (ExecutionInfo info : traced) {
                String query = info.getRequest() instanceof BoundStatement bound
                        ? bound.getPreparedStatement().getQuery()
                        : String.valueOf(info.getRequest());
                if (query.startsWith("SELECT")) {
                    most.merge(query, tombstonesRead(info.getTracingId()), Math::max);
                }
            }
            assertThat(most).as("traced reads").hasSizeGreaterThanOrEqualTo(3);
            assertThat(most)
                    .as("tombstones read per statement after %d acquisitions", n)
                    .allSatisfy((query, tombstones) ->
                            assertThat(tombstones).as(query).isLessThanOrEqualTo(4L));

            ResultSet fromHead = session.execute(SimpleStatement.newInstance(
                            "SELECT ticket FROM " + CassandraStatements.QUEUE_TABLE + " WHERE lock_id = ? LIMIT 32",
                            key)
                    .setTracing(true));
            assertThat(tombstonesRead(fromHead.getExecutionInfo().getTracingId()))
                    .as("the queue read from the head of the partition")
                    .isGreaterThanOrEqualTo(n);
        }
    }

    /**
     * The tombstones a traced read stepped over: the largest "Read n live rows and m tombstone cells" of its trace,
     * read from {@code system_traces} once the trace is complete.
     */
    static long tombstonesRead(UUID tracingId) throws InterruptedException {
        Pattern read = Pattern.compile("Read (\\d+) live rows? and (\\d+) tombstone");
        AtomicLong most = new AtomicLong(-1);
        Deadlines.await(
                () -> {
                    Row done = session.execute(SimpleStatement.newInstance(
                                    "SELECT duration FROM system_traces.sessions WHERE session_id = ?", tracingId))
                            .one();
                    if (done == null || done.isNull(0)) {
                        return false;
                    }
                    for (Row event : session.execute(SimpleStatement.newInstance(
                            "SELECT activity FROM system_traces.events WHERE session_id = ?", tracingId))) {
                        Matcher m = read.matcher(String.valueOf(event.getString(0)));
                        if (m.find()) {
                            most.accumulateAndGet(Long.parseLong(m.group(2)), Math::max);
                        }
                    }
                    return most.get() >= 0;
                },
                TestTimeouts.scaled(Duration.ofSeconds(30)),
                () -> "no complete trace with a read for " + tracingId);
        return most.get();
    }

    /**
     * A waiter whose ticket lies at or below the queue's low-water mark (its clock was behind the holder who released)
     * is invisible to reads that start past the mark: it takes a fresh ticket above the mark and is served.
     */
    @Test
    void waiterTicketBelowTheMark_takesAFreshTicketAboveIt_andIsServed() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("below-mark");
        try (CassandraLockBackend backend = open("", lease)) {
            QueueAlgorithm queue = (QueueAlgorithm) backend.algorithm();
            Lease first = backend.tryAcquire(request(key, lease)).orElseThrow();
            assertThat(backend.release(first)).isTrue();
            String mark = queue.knownMark(key);
            assertThat(mark).isNotEmpty();
            LockRequest late = request(key, lease);
            QueueAlgorithm.Attempt attempt = queue
            .new Attempt(late, QueueAlgorithm.ticket(QueueAlgorithm.micros(mark) - 5_000_000L, late.ownerId()));
            CassandraLease granted = attempt.await(
                            Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(10)), Ticker.system()))
                    .orElseThrow();
            assertThat(granted.ticket()).isGreaterThan(mark);
            assertThat(backend.release(granted)).isTrue();
            assertThat(cellsOf(key)).isEmpty();
        }
    }

    /**
     * The legacy algorithm does not give Theorem 4 (of simultaneous tryLocks on a free lock, one wins): two TryLocks
     * (Listing 3) that both find the main row empty and both write their shadow cell before either reads the shadow
     * row both see two cells, both answer ConcurrentAttempt and withdraw, and the lock stays free with nobody holding
     * it. Driven step by step through the algorithm's own steps; a single full TryLock afterwards succeeds.
     */
    @Test
    void legacyTryLock_twoAtOnceOnAFreeKey_bothConcurrentAttempt_nobodyWins_theorem4Fails() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("legacy-t4");
        try (CassandraLockBackend backend = open("algorithm=legacy", lease)) {
            LegacyAlgorithm legacy = (LegacyAlgorithm) backend.algorithm();
            LockRequest ra = request(key, lease);
            LockRequest rb = request(key, lease);
            int ttl = Ttl.seconds(lease);
            // Lines 1-6: both find the main row empty.
            assertThat(join(legacy.mainRowEmptyAsync(key))).isTrue();
            assertThat(join(legacy.mainRowEmptyAsync(key))).isTrue();
            // Line 7: both write their shadow cell.
            join(legacy.writeShadowAsync(key, ra.ownerId(), ttl));
            join(legacy.writeShadowAsync(key, rb.ownerId(), ttl));
            // Lines 8-9: each sees two cells, so lines 14-15: ConcurrentAttempt, withdraw.
            assertThat(join(legacy.aloneInShadowAsync(key)))
                    .as("A alone in the shadow row")
                    .isFalse();
            assertThat(join(legacy.aloneInShadowAsync(key)))
                    .as("B alone in the shadow row")
                    .isFalse();
            join(legacy.withdrawAsync(key, ra.ownerId(), false));
            join(legacy.withdrawAsync(key, rb.ownerId(), false));
            // Both tryLocks failed and nobody holds the lock.
            assertThat(join(legacy.mainRowEmptyAsync(key))).isTrue();
            assertThat(cellsOf(key)).isEmpty();
            LegacyAlgorithm.Result alone = legacy.tryLock(request(key, lease));
            assertThat(alone.outcome).isEqualTo(LegacyAlgorithm.Outcome.SUCCESS);
            assertThat(backend.release(alone.lease.orElseThrow())).isTrue();
        }
    }

    /**
     * Listing 4 without a thread: waiters of the legacy algorithm on a held key hold no thread of the blocking executor
     * and park none inside the backend between their TryLocks; a cancelled one stops trying; once the holder releases,
     * each of the others gets the lock in turn, and nothing is left in the tables.
     */
    @Test
    void legacyAcquireAsync_waitersParkNoThread_cancelledOneStops_othersServed() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("legacy-async");
        int waiters = 6;
        java.util.concurrent.ThreadPoolExecutor executor =
                (java.util.concurrent.ThreadPoolExecutor) java.util.concurrent.Executors.newCachedThreadPool();
        try (CassandraLockBackend backend = open("algorithm=legacy", lease)) {
            Lease held = backend.tryAcquire(request(key, lease)).orElseThrow();
            long requestsBefore = backend.calls().requests();
            List<CompletableFuture<Optional<Lease>>> pending = new ArrayList<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            AtomicInteger served = new AtomicInteger();
            for (int i = 0; i < waiters; i++) {
                CompletableFuture<Optional<Lease>> waiting = backend.acquireAsync(
                        request(key, lease), Deadline.after(Duration.ofMinutes(2), Ticker.system()), executor);
                pending.add(waiting);
                done.add(waiting.thenAccept(granted -> {
                    served.incrementAndGet();
                    backend.release(granted.orElseThrow());
                }));
            }
            // Every waiter has tried at least twice (one main-row read each): they are between TryLocks now and then.
            Deadlines.await(
                    () -> backend.calls().requests() - requestsBefore >= 2L * waiters,
                    TestTimeouts.scaled(Duration.ofSeconds(20)),
                    () -> "the waiters did not try: " + (backend.calls().requests() - requestsBefore) + " requests");
            assertThat(executor.getLargestPoolSize())
                    .as("threads of the blocking executor used while waiting")
                    .isZero();
            assertThat(threadsParkedInTheBackend())
                    .as("threads inside the backend while %d legacy acquireAsync calls wait", waiters)
                    .isEmpty();

            assertThat(pending.get(waiters - 1).cancel(false)).isTrue();
            assertThat(backend.release(held)).isTrue();
            CompletableFuture.allOf(done.subList(0, waiters - 1).toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(served.get()).isEqualTo(waiters - 1);
            assertThat(cellsOf(key)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }

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
                TestTimeouts.scaled(Duration.ofSeconds(5)),
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
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
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

    /** Every query counts: an uncontended tryLock is 6 requests (Listing 7), its release 3. */
    @Test
    void storeRequests_uncontendedTryLockAndRelease_countsEveryQuery() {
        try (CassandraLockBackend backend = open("timePeriod=1h", Duration.ofSeconds(5))) {
            String key = key("count");
            long before = backend.storeRequests().orElseThrow();
            Lease lease =
                    backend.tryAcquire(request(key, Duration.ofSeconds(5))).orElseThrow();
            long afterGrant = backend.storeRequests().orElseThrow();
            assertThat(backend.release(lease)).isTrue();
            long afterRelease = backend.storeRequests().orElseThrow();
            // The first attempt on a key also reads the queue's low-water mark (this backend knows none yet).
            assertThat(afterGrant - before).isEqualTo(7);
            assertThat(afterRelease - afterGrant).isEqualTo(3);
            // The release raised the mark and this backend remembers it: the next tryLock does not read it.
            Lease again =
                    backend.tryAcquire(request(key, Duration.ofSeconds(5))).orElseThrow();
            assertThat(backend.storeRequests().orElseThrow() - afterRelease).isEqualTo(6);
            assertThat(backend.release(again)).isTrue();
        }
    }

    /**
     * A waiter whose wait outlasts several TTLs keeps its place: its queue cell is rewritten while it waits, so a
     * later arrival does not overtake it.
     */
    /**
     * Section 5.3's lease on a waiter: the first waiter polls only every 3 s while its queue cell lives 2 s (lease 1 s),
     * so only the keep-alive rewrite keeps the cell; it must be in the store all along, and the waiter served before
     * one who queued after it.
     */
    @Test
    void waiter_pollingSlowerThanItsTtl_keepsItsCellAlive_andItsPlace() throws Exception {
        Duration lease = Duration.ofSeconds(1); // queue cells get a 2 s TTL
        String key = key("keep");
        try (RemoteLocker holderLocker =
                        RemoteLockers.builder().uri(uri("")).leaseTime(lease).build();
                RemoteLocker first = RemoteLockers.builder()
                        .uri(uri("pollMin=3s&pollMax=3s"))
                        .leaseTime(lease)
                        .build();
                RemoteLocker second =
                        RemoteLockers.builder().uri(uri("")).leaseTime(lease).build()) {
            RemoteLock held = holderLocker.lock(key);
            CompletableFuture<RemoteLock> firstWaits = first.lockAsync(key, Duration.ofMinutes(1));
            Deadlines.await(
                    () -> queueCells(key) == 2,
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
                    () -> "the first waiter did not enqueue: " + cellsOf(key));
            // Two TTLs of the waiter's queue cell pass, and more than one poll interval: it must stay queued all along.
            assertThat(Deadlines.holdsFor(Duration.ofSeconds(4), () -> !firstWaits.isDone() && queueCells(key) == 2))
                    .as("the waiter's queue cell outlived its TTL between polls")
                    .isTrue();
            CompletableFuture<RemoteLock> secondWaits = second.lockAsync(key, Duration.ofMinutes(1));
            Deadlines.await(
                    () -> queueCells(key) == 3,
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
                    () -> "the first waiter lost its place or the second did not enqueue: " + cellsOf(key));
            held.close();
            RemoteLock firstLock = firstWaits.get(30, TimeUnit.SECONDS);
            assertThat(secondWaits).isNotDone();
            firstLock.close();
            secondWaits.get(30, TimeUnit.SECONDS).close();
        }
        assertThat(cellsOf(key)).isEmpty();
    }

    private static final int PARKED_SNAPSHOTS = 5;
    private static final long PARKED_SNAPSHOT_MILLIS = 50;

    /**
     * The names of the threads parked in the backend: not running, with a frame of the backend on their stack, in each of
     * {@value #PARKED_SNAPSHOTS} snapshots {@value #PARKED_SNAPSHOT_MILLIS} ms apart. One snapshot also catches a thread
     * passing through (the poll thread, caught once at load 11 while it started an attempt, for a moment not running); a
     * thread that waits for an answer is in every one.
     */
    private static List<String> threadsParkedInTheBackend() throws InterruptedException {
        List<String> parked = threadsInTheBackendNow();
        for (int i = 1; i < PARKED_SNAPSHOTS && !parked.isEmpty(); i++) {
            Thread.sleep(PARKED_SNAPSHOT_MILLIS);
            parked = new ArrayList<>(parked);
            parked.retainAll(threadsInTheBackendNow());
        }
        return parked;
    }

    private static List<String> threadsInTheBackendNow() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getState() != Thread.State.RUNNABLE)
                .filter(e -> java.util.Arrays.stream(e.getValue())
                        .map(StackTraceElement::getClassName)
                        .anyMatch(c -> c.startsWith("io.distlock.cassandra.")
                                && !c.startsWith(CassandraQueueTest.class.getName())))
                .map(e -> e.getKey().getName())
                .toList();
    }

    private static long queueCells(String key) {
        return cellsOf(key).stream()
                .filter(c -> c.startsWith(CassandraStatements.QUEUE_TABLE))
                .count();
    }

    /**
     * The native asynchronous wait: 40 waiters of one key hold no thread (none of the blocking executor, none parked in
     * the backend), are served in call order once the holder releases, and a cancelled one leaves the queue.
     */
    @Test
    void acquireAsync_manyWaiters_parkNoThread_areServedInCallOrder_andCancelledOneLeavesTheQueue() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("async");
        int waiters = 40;
        java.util.concurrent.ThreadPoolExecutor executor =
                (java.util.concurrent.ThreadPoolExecutor) java.util.concurrent.Executors.newCachedThreadPool();
        try (CassandraLockBackend backend = open("", lease)) {
            Lease held = backend.tryAcquire(request(key, lease)).orElseThrow();
            List<Integer> served = java.util.Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<Optional<Lease>>> pending = new ArrayList<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                int call = i;
                CompletableFuture<Optional<Lease>> waiting = backend.acquireAsync(
                        request(key, lease), Deadline.after(Duration.ofMinutes(2), Ticker.system()), executor);
                pending.add(waiting);
                done.add(waiting.thenAccept(granted -> {
                    served.add(call);
                    backend.release(granted.orElseThrow());
                }));
            }
            Deadlines.await(
                    () -> queueCells(key) == waiters + 1,
                    TestTimeouts.scaled(Duration.ofSeconds(20)),
                    () -> "the waiters did not queue: " + queueCells(key));
            assertThat(executor.getLargestPoolSize())
                    .as("threads of the blocking executor used while waiting")
                    .isZero();
            // This includes the locker's GlobalTime updater thread: its ticks wait for no answer either.
            assertThat(threadsParkedInTheBackend())
                    .as("threads inside the backend while %d acquireAsync calls wait", waiters)
                    .isEmpty();

            assertThat(pending.get(waiters - 1).cancel(false)).isTrue();
            Deadlines.await(
                    () -> queueCells(key) == waiters,
                    TestTimeouts.scaled(Duration.ofSeconds(20)),
                    () -> "the cancelled waiter's cell is still queued: " + queueCells(key));

            assertThat(backend.release(held)).isTrue();
            CompletableFuture.allOf(done.subList(0, waiters - 1).toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            List<Integer> inCallOrder = new ArrayList<>();
            for (int i = 0; i < waiters - 1; i++) {
                inCallOrder.add(i);
            }
            assertThat(served).containsExactlyElementsOf(inCallOrder);
            assertThat(cellsOf(key)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * A renewal reads the owner cell (still ours), the holder releases, then the renewal's rewrite
     * is delivered. It must not bring the released cells back: the tables stay empty and another locker's {@code
     * lock(key, 2s)} succeeds.
     */
    @Test
    void renewal_rewriteDeliveredAfterRelease_bringsNoCellBack() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key("renew-" + algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease);
                    CassandraLockBackend b = open("algorithm=" + algorithm, lease)) {
                CassandraLease held =
                        (CassandraLease) a.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(a.algorithm().renewalCheck(held))
                        .as("the renewal finds the owner cell")
                        .isTrue();
                assertThat(a.release(held)).isTrue();

                OptionalLong renewed = a.algorithm().renewalRewrite(held, lease);
                assertReleasedForGood(algorithm, key, renewed, b, lease);
            }
        }
    }

    /**
     * After a renewal that raced its lease's release: the tables hold nothing of {@code key}, {@code other}'s {@code
     * lock(key, 2s)} succeeds, and the renewal answered that the lease is gone.
     */
    private static void assertReleasedForGood(
            String algorithm, String key, OptionalLong renewed, CassandraLockBackend other, Duration lease)
            throws InterruptedException {
        assertThat(cellsOf(key))
                .as(algorithm + ": the released cells stay deleted")
                .isEmpty();
        Optional<Lease> next = other.acquire(
                request(key, lease), Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(2)), Ticker.system()));
        assertThat(next)
                .as(algorithm + ": another locker takes the released key")
                .isPresent();
        assertThat(other.release(next.get())).isTrue();
        assertThat(renewed).as(algorithm + ": a renewal of a released lease").isEmpty();
    }

    /**
     * A node dies while a release's delete is in flight: the coordinator answers a write timeout (a replica it still
     * believed alive did not acknowledge; {@link CassandraCalls#replicaTimeoutNext}). The delete is sent again, so the release
     * answers as if nothing happened and leaves nothing behind, instead of failing and leaving the key held until its
     * TTL (the driver's default retry policy sends no write again after a write timeout).
     */
    @Test
    void release_writeTimeoutOnADelete_isSentAgain_andFreesTheKey() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        Map<String, List<String>> deletes = Map.of(
                "queue", List.of("deleting the owner cell", "deleting the queue cell"),
                "legacy", List.of("deleting the main cell"));
        for (Map.Entry<String, List<String>> algorithm : deletes.entrySet()) {
            for (String delete : algorithm.getValue()) {
                String key = key("release-timeout-" + algorithm.getKey());
                try (CassandraLockBackend a = open("algorithm=" + algorithm.getKey(), lease)) {
                    Lease held = a.tryAcquire(request(key, lease)).orElseThrow();
                    a.calls().replicaTimeoutNext(delete);
                    assertThat(a.release(held))
                            .as(algorithm.getKey() + ": the release, a write timeout " + delete)
                            .isTrue();
                    assertThat(cellsOf(key))
                            .as(algorithm.getKey() + ": cells after the release")
                            .isEmpty();
                }
            }
        }
    }

    /**
     * A node dies while a renewal's rewrite is in flight (a write timeout, as above). The rewrite, which the driver
     * never sends twice, is sent again through the lease's fence, and the renewal extends the lease.
     */
    @Test
    void renewal_writeTimeoutOnTheRewrite_isSentAgain_andExtendsTheLease() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key("renew-timeout-" + algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease)) {
                CassandraLease held =
                        (CassandraLease) a.tryAcquire(request(key, lease)).orElseThrow();
                long grantedUntil = held.validUntilNanos();
                a.calls().replicaTimeoutNext("renewing the lease");
                OptionalLong renewed = a.renew(held, lease);
                assertThat(renewed)
                        .as(algorithm + ": a renewal whose rewrite timed out once")
                        .isPresent();
                assertThat(renewed.getAsLong()).isGreaterThan(grantedUntil);
                assertThat(a.release(held)).isTrue();
                assertThat(cellsOf(key)).isEmpty();
            }
        }
    }

    /**
     * The rewrite's resend must keep what its non-idempotence protects: the holder releases between a rewrite that
     * timed out (applied, its answer lost) and the resend. No resend may follow the release's deletes, or it would
     * bring the released cells back for a whole TTL: the renewal reports the lease gone, the tables stay empty and
     * another locker's {@code lock(key, 2s)} succeeds.
     */
    @Test
    void renewal_releasedBetweenATimedOutRewriteAndItsResend_bringsNoCellBack() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        for (String algorithm : List.of("queue", "legacy")) {
            String key = key("renew-resend-" + algorithm);
            try (CassandraLockBackend a = open("algorithm=" + algorithm, lease);
                    CassandraLockBackend b = open("algorithm=" + algorithm, lease)) {
                CassandraLease held =
                        (CassandraLease) a.tryAcquire(request(key, lease)).orElseThrow();
                AtomicReference<Boolean> released = new AtomicReference<>();
                a.calls().replicaTimeoutNext("renewing the lease");
                a.calls().beforeRewriteResend(() -> released.set(a.release(held)));
                OptionalLong renewed = a.renew(held, lease);
                assertThat(released.get())
                        .as(algorithm + ": the release between the timed-out rewrite and its resend")
                        .isTrue();
                assertReleasedForGood(algorithm, key, renewed, b, lease);
            }
        }
    }

    /**
     * A, first in the queue, writes its owner cell, and the owner-row read that follows fails. B, whose
     * ticket is earlier (taken before A's, written after: seed section 5's delay), joins the queue, so A's next poll is
     * no longer first. A must withdraw the owner cell it left, or B, first, finds two cells at every claim until that
     * cell's TTL runs out.
     */
    @Test
    void claim_ownerRowReadFails_thenNoLongerFirst_leavesNoOwnerCell() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("stray");
        try (CassandraLockBackend backend = open("", lease)) {
            QueueAlgorithm queue = (QueueAlgorithm) backend.algorithm();
            LockRequest ra = request(key, lease);
            LockRequest rb = request(key, lease);
            long now = backend.time().ticketMicros();
            QueueAlgorithm.Attempt a = queue.new Attempt(ra, QueueAlgorithm.ticket(now + 1000, ra.ownerId()));
            QueueAlgorithm.Attempt b = queue.new Attempt(rb, QueueAlgorithm.ticket(now, rb.ownerId()));
            join(a.learnMarkAsync());
            join(a.enqueueAsync());
            assertThat(join(a.placeAsync())).isZero();
            backend.calls().failNext("reading the owner row");
            assertThatThrownBy(() -> join(a.claimAsync())).isInstanceOf(LockBackendException.class);
            join(b.enqueueAsync());

            CompletableFuture<Optional<CassandraLease>> aWaits = a.waitFor(
                            Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(60)), Ticker.system()))
                    .result();
            Optional<CassandraLease> bLease = b.waitFor(
                            Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(2)), Ticker.system()))
                    .result()
                    .get(TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(bLease).as("B, first, is granted while A waits").isPresent();
            assertThat(aWaits).isNotDone();
            List<String> owners = cellsOf(key).stream()
                    .filter(c -> c.startsWith(CassandraStatements.OWNER_TABLE))
                    .toList();
            assertThat(owners).as("the owner row").hasSize(1).allMatch(c -> c.contains(rb.ownerId()));

            assertThat(queue.release(bLease.get())).isTrue();
            CassandraLease aLease = aWaits.get(
                            TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow();
            assertThat(queue.release(aLease)).isTrue();
            assertThat(cellsOf(key)).isEmpty();
        }
    }

    /**
     * Sixteen waiters of one key in one locker, each releasing as soon as it is granted. A release
     * wakes the next in line only: the others keep their poll timers (slow here, {@code pollMin=200ms}), so each
     * hand-off costs the release and one claim, not a poll of every waiter still queued.
     */
    @Test
    void release_wakesOneLocalWaiter_requestsPerAcquisitionStayBounded() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        int waiters = 16;
        String key = key("herd");
        java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newFixedThreadPool(4);
        try (CassandraLockBackend backend = open("pollMin=200ms&pollMax=1s", lease)) {
            Lease first = backend.tryAcquire(request(key, lease)).orElseThrow();
            Deadline deadline = Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(60)), Ticker.system());
            List<CompletableFuture<Boolean>> served = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                served.add(backend.acquireAsync(request(key, lease), deadline, executor)
                        .thenApplyAsync(l -> backend.release(l.orElseThrow()), executor));
            }
            Deadlines.await(
                    () -> cellsOf(key).stream()
                                    .filter(c -> c.startsWith(CassandraStatements.QUEUE_TABLE))
                                    .count()
                            == waiters + 1,
                    TestTimeouts.scaled(Duration.ofSeconds(30)),
                    () -> "the waiters did not all queue: " + cellsOf(key));
            Thread.sleep(300); // every waiter's first poll answered (they poll every 200 ms at most)
            long before = backend.storeRequests().orElseThrow();
            assertThat(backend.release(first)).isTrue();
            CompletableFuture.allOf(served.toArray(CompletableFuture[]::new))
                    .get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
            double perAcquisition = (backend.storeRequests().orElseThrow() - before) / (double) waiters;
            // A hand-off: release 3 (check, owner delete, queue delete) + the next waiter's poll and claim 4; some
            // timer polls and GlobalTime ticks on top. A wake-up of every waiter adds one poll per waiter still queued.
            LOG.info("{} waiters of one key in one locker: {} store requests per acquisition", waiters, perAcquisition);
            assertThat(perAcquisition).as("store requests per acquisition").isLessThan(11.0);
            assertThat(served).allMatch(f -> f.join());
            assertThat(cellsOf(key)).isEmpty();
        } finally {
            executor.shutdownNow();
        }
    }

    /**
     * A waiter whose ticket is below the holder's (its clock behind, or a pause between taking the
     * time and writing the ticket) finds itself first in the queue while the holder holds. It must not write and
     * withdraw an owner cell every {@code pollMin} for the whole hold (about 800 requests a second, and tombstones):
     * its requests during a 2 s hold stay bounded, and it is served once the holder releases.
     */
    @Test
    void waiterTicketBelowTheHolders_duringTheHold_sendsBoundedRequests_thenIsServed() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("below-holder");
        try (CassandraLockBackend holder = open("", lease);
                CassandraLockBackend waiting = open("", lease)) {
            CassandraLease held =
                    (CassandraLease) holder.tryAcquire(request(key, lease)).orElseThrow();
            QueueAlgorithm queue = (QueueAlgorithm) waiting.algorithm();
            LockRequest rw = request(key, lease);
            QueueAlgorithm.Attempt early = queue
            .new Attempt(rw, QueueAlgorithm.ticket(QueueAlgorithm.micros(held.ticket()) - 1000, rw.ownerId()));
            long start = waiting.storeRequests().orElseThrow();
            CompletableFuture<Optional<CassandraLease>> served = early.waitFor(
                            Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(60)), Ticker.system()))
                    .result();
            Deadlines.await(
                    () -> waiting.storeRequests().orElseThrow() >= start + 4,
                    TestTimeouts.scaled(Duration.ofSeconds(10)),
                    () -> "the waiter sent nothing");

            long before = waiting.storeRequests().orElseThrow();
            Thread.sleep(2000); // the window measured: the holder keeps the lock
            long during = waiting.storeRequests().orElseThrow() - before;
            assertThat(served).isNotDone();
            // Polls backing off from pollMin to pollMax (2 reads each) and GlobalTime's ticks: a few dozen at most.
            LOG.info("A waiter with a ticket below the holder's: {} store requests during a 2 s hold", during);
            assertThat(during)
                    .as("the early waiter's requests during a 2 s hold")
                    .isLessThan(100);

            assertThat(holder.release(held)).isTrue();
            CassandraLease next = served.get(
                            TestTimeouts.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow();
            assertThat(queue.release(next)).isTrue();
            assertThat(cellsOf(key)).isEmpty();
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
                        TestTimeouts.scaled(Duration.ofSeconds(10)),
                        () -> "a locker with timeService=external does not open while the service runs");
            }
        } finally {
            session.execute("DROP KEYSPACE IF EXISTS " + keyspace);
        }
    }

    @Test
    void open_withoutTables_failsNamingCreateSchema() {
        session.execute("CREATE KEYSPACE IF NOT EXISTS distlock_no_tables WITH replication = "
                + "{'class': 'SimpleStrategy', 'replication_factor': 1}");
        String noTables = "cassandra://" + CASSANDRA.contactPointsString() + "/distlock_no_tables?localDatacenter="
                + CASSANDRA.localDatacenter();
        try {
            assertThatThrownBy(() -> RemoteLockers.open(noTables).close())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("createSchema=true")
                    .hasMessageContaining("CREATE TABLE IF NOT EXISTS distlock_no_tables.distlock_queue");
        } finally {
            session.execute("DROP KEYSPACE IF EXISTS distlock_no_tables");
        }
    }

    @Test
    void open_missingKeyspace_failsNamingIt() {
        String missing = "cassandra://" + CASSANDRA.contactPointsString() + "/no_such_keyspace?localDatacenter="
                + CASSANDRA.localDatacenter();
        assertThatThrownBy(() -> RemoteLockers.open(missing).close())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("no_such_keyspace")
                .hasMessageContaining("CREATE KEYSPACE");
    }

    @Test
    void createSchema_tablesKeepTombstonesOneDay_andTheMarkLivesAsLong() {
        // The class's tables were made by createSchema=true (CassandraKitHooks.uri), without keyRetention.
        for (String table : List.of("distlock_queue", "distlock_owner")) {
            assertThat(session.execute(
                                    "SELECT gc_grace_seconds FROM system_schema.tables WHERE keyspace_name = ? AND"
                                            + " table_name = ?",
                                    CASSANDRA.keyspace(),
                                    table)
                            .one()
                            .getInt(0))
                    .as(table)
                    .isEqualTo(86_400);
        }
        String key = key("retention-default");
        try (CassandraLockBackend backend = open("", Duration.ofSeconds(5))) {
            assertThat(backend.release(backend.tryAcquire(request(key, Duration.ofSeconds(5)))
                            .orElseThrow()))
                    .isTrue();
        }
        assertThat(markTtl(key)).isBetween(86_400 - 120, 86_400);
    }

    @Test
    void release_withShortKeyRetention_theMarkExpires_andTheKeyIsExclusiveAgain() throws Exception {
        // Lease 1 s (TTL 2 s) and connectTimeout 3 s: a retention must exceed 5 s.
        Duration lease = Duration.ofSeconds(1);
        Duration connect = Duration.ofSeconds(3);
        String options = "keyRetention=6s";
        String key = key("retention");
        try (CassandraLockBackend a = open(CASSANDRA, options, lease, connect, Clock.systemUTC())) {
            assertThat(a.release(a.tryAcquire(request(key, lease)).orElseThrow()))
                    .isTrue();
            assertThat(markTtl(key)).isBetween(1, 6);
            Deadline gone = Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(30)), Ticker.system());
            while (markTtl(key) != null) {
                assertThat(gone.hasPassed())
                        .as("the mark of %s still there", key)
                        .isFalse();
                Thread.sleep(200);
            }
            assertThat(session.execute(
                                    "SELECT ticket FROM " + CassandraStatements.QUEUE_TABLE + " WHERE lock_id = ?", key)
                            .one())
                    .isNull();
            // Taken again: by a locker that never met the key (it reads no mark) and by one that remembers the old
            // mark; each excludes the other.
            try (CassandraLockBackend fresh = open(CASSANDRA, options, lease, connect, Clock.systemUTC())) {
                Lease held = fresh.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(a.tryAcquire(request(key, lease))).isEmpty();
                assertThat(fresh.release(held)).isTrue();
                Lease again = a.tryAcquire(request(key, lease)).orElseThrow();
                assertThat(fresh.tryAcquire(request(key, lease))).isEmpty();
                assertThat(a.release(again)).isTrue();
            }
            assertThat(cellsOf(key)).isEmpty();
            assertThat(markTtl(key)).isBetween(1, 6);
        }
    }

    /** The TTL left on {@code key}'s low-water mark, or null if it has none. */
    private static Integer markTtl(String key) {
        Row row = session.execute("SELECT TTL(low) FROM " + CassandraStatements.QUEUE_TABLE + " WHERE lock_id = ?", key)
                .one();
        return row == null || row.isNull(0) ? null : row.getInt(0);
    }

    @Test
    void lockersUsing_sessionWhoseNodeHasAnIpv6Address_buildsAndLocks() {
        // The application's session reaches the node at [::1], through a proxy there: its node's end point is IPv6.
        try (TcpProxy proxy = TcpProxy.start(
                        "ipv6",
                        new InetSocketAddress("::1", 0),
                        CASSANDRA.contactPoints().get(0));
                CqlSession v6 = CqlSession.builder()
                        .addContactPoint(proxy.listenAddress())
                        .withLocalDatacenter(CASSANDRA.localDatacenter())
                        .build()) {
            assertThat(v6.getMetadata().getNodes().values())
                    .extracting(node -> ((InetSocketAddress) node.getEndPoint().resolve()).getAddress())
                    .allMatch(address -> address instanceof java.net.Inet6Address);
            String key = key("ipv6");
            try (RemoteLocker locker =
                    CassandraLockers.using(v6, CASSANDRA.keyspace()).build()) {
                RemoteLock lock = locker.tryLock(key).orElseThrow();
                assertThat(cellsOf(key)).isNotEmpty();
                lock.release();
            }
            assertThat(cellsOf(key)).isEmpty();
            assertThat(v6.isClosed()).isFalse();
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
