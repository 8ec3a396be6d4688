package io.distlock.cassandra;

import static io.distlock.cassandra.CassandraCalls.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Seed section 5's queue algorithm on one node: Listing 6's retry when two believe they are first, waiters whose
 * tickets fall below the low-water mark or the holder's, a claim whose owner-row read fails, a waiter's queue cell kept
 * alive, the tombstones its reads step over, the requests of an uncontended tryLock (Listing 7), and the waiter behind
 * a broken holder.
 */
class QueueAlgorithmTest extends OneNodeFixture {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(QueueAlgorithmTest.class);

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
                Duration.ofSeconds(30),
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
                    Duration.ofSeconds(10),
                    () -> "the first waiter did not enqueue: " + cellsOf(key));
            // Two TTLs of the waiter's queue cell pass, and more than one poll interval: it must stay queued all along.
            assertThat(Deadlines.holdsFor(Duration.ofSeconds(4), () -> !firstWaits.isDone() && queueCells(key) == 2))
                    .as("the waiter's queue cell outlived its TTL between polls")
                    .isTrue();
            CompletableFuture<RemoteLock> secondWaits = second.lockAsync(key, Duration.ofMinutes(1));
            Deadlines.await(
                    () -> queueCells(key) == 3,
                    Duration.ofSeconds(10),
                    () -> "the first waiter lost its place or the second did not enqueue: " + cellsOf(key));
            held.close();
            RemoteLock firstLock = firstWaits.get(30, TimeUnit.SECONDS);
            assertThat(secondWaits).isNotDone();
            firstLock.close();
            secondWaits.get(30, TimeUnit.SECONDS).close();
        }
        assertThat(cellsOf(key)).isEmpty();
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
                    Duration.ofSeconds(10),
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
     * Breaking a key whose holder no longer renews (its process gone) deletes the holder's queue cell with its owner
     * cell, so the waiter behind it is granted at its next poll: not once the holder's ticket runs out with its TTL
     * (31 s here), which is when a waiter behind a dead holder whose owner cell alone was deleted is served.
     */
    @Test
    void breakLock_ofAHolderThatNoLongerRenews_grantsTheWaiter_atItsNextPoll() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        String key = key("broken");
        try (CassandraLockBackend gone = open("", lease);
                CassandraLockBackend waiting = open("", lease)) {
            CassandraLockBackend operator = waiting; // any backend of the keyspace reads and breaks the same cells
            Lease held = gone.tryAcquire(request(key, lease)).orElseThrow(); // never renewed, never released
            CompletableFuture<Optional<Lease>> next = waiting.acquireAsync(
                    request(key, lease),
                    Deadline.after(TestTimeouts.scaled(Duration.ofSeconds(60)), Ticker.system()),
                    Runnable::run);
            Deadlines.await(
                    () -> operator.inspect(key).waiting().orElseThrow() == 1,
                    Duration.ofSeconds(10),
                    () -> "the waiter never queued: " + operator.inspect(key));

            long broken = System.nanoTime();
            assertThat(operator.breakLock(key)).extracting(LockHolder::ownerId).containsExactly(held.ownerId());
            Lease granted = next.get(TestTimeouts.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS)
                    .orElseThrow();
            Duration waited = Duration.ofNanos(System.nanoTime() - broken);
            LOG.info("The waiter behind a broken holder that no longer renews was granted {} after the break", waited);
            assertThat(waited)
                    .as("the wait after the break (the holder's ticket would live 31 s)")
                    .isLessThan(TestTimeouts.scaled(Duration.ofSeconds(5)));
            assertThat(waiting.release(granted)).isTrue();
            assertThat(cellsOf(key)).isEmpty();
        }
    }
}
