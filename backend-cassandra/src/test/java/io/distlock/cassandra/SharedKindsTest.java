package io.distlock.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteSemaphore;
import io.distlock.Ticker;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.LockRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Read-write locks and semaphores on the queue (docs/theory.md, Listing 6'): readers share, a writer excludes, a waiting
 * writer is served before later readers, a semaphore's bound, a dead holder's permit freed, a mismatched N refused,
 * abandoned waits leave nothing, and the three spaces of a key apart.
 */
class SharedKindsTest extends OneNodeFixture {

    private static final Duration WAIT = TestTimeouts.scaled(Duration.ofSeconds(20));

    private static RemoteLocker one;
    private static RemoteLocker other;

    @BeforeAll
    static void lockers() {
        one = RemoteLockers.open(uri(""));
        other = RemoteLockers.open(uri(""));
    }

    @AfterAll
    static void closeLockers() {
        if (one != null) {
            one.close();
        }
        if (other != null) {
            other.close();
        }
    }

    @Test
    void readers_share_andAWriter_excludesEveryone() throws Exception {
        String key = key("rw");
        RemoteLock read = one.readWriteLock(key).readLock().tryLock().orElseThrow();
        RemoteLock alsoRead = other.readWriteLock(key).readLock().tryLock().orElseThrow();
        assertThat(read.kind()).isEqualTo(LockKind.READ);
        assertThat(other.readWriteLock(key).writeLock().tryLockAsync().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .as("a writer beside readers")
                .isEmpty();
        read.release();
        alsoRead.release();
        RemoteLock write = other.readWriteLock(key).writeLock().tryLock().orElseThrow();
        assertThat(one.readWriteLock(key).readLock().tryLock())
                .as("a reader beside a writer")
                .isEmpty();
        assertThat(one.readWriteLock(key).writeLock().tryLock())
                .as("a writer beside a writer")
                .isEmpty();
        write.release();
        assertThat(cellsOf(key)).isEmpty();
    }

    @Test
    void aWaitingWriter_isServedBefore_laterReaders() throws Exception {
        String key = key("writer-first");
        RemoteLock reader = one.readWriteLock(key).readLock().lock(WAIT);
        CompletableFuture<RemoteLock> writer =
                other.readWriteLock(key).writeLock().lockAsync(WAIT);
        awaitQueued(key, 2);
        assertThat(other.readWriteLock(key).readLock().tryLockAsync().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .as("a reader that comes after a waiting writer")
                .isEmpty();
        CompletableFuture<RemoteLock> laterReader =
                other.readWriteLock(key).readLock().lockAsync(WAIT);
        awaitQueued(key, 3);
        reader.release();
        RemoteLock write = writer.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(laterReader)
                .as("a reader queued after the writer, while it holds")
                .isNotDone();
        write.release();
        laterReader.get(WAIT.toSeconds(), TimeUnit.SECONDS).release();
        assertThat(cellsOf(key)).isEmpty();
    }

    @Test
    void aSemaphore_grantsNPermits_andNoMore_andAReleaseLetsTheNextIn() throws Exception {
        String key = key("bound");
        List<RemoteLock> permits = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RemoteLocker locker = i % 2 == 0 ? one : other;
            permits.add(locker.semaphore(key, 3)
                    .tryLockAsync()
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS)
                    .orElseThrow());
        }
        assertThat(permits).extracting(RemoteLock::kind).containsOnly(LockKind.PERMIT);
        assertThat(one.semaphore(key, 3).tryLockAsync().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .as("a fourth permit of three")
                .isEmpty();
        CompletableFuture<RemoteLock> waiting = other.semaphore(key, 3).lockAsync(WAIT);
        permits.get(1).release();
        waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS).release();
        permits.forEach(RemoteLock::release);
        assertThat(cellsOf(key)).isEmpty();
    }

    @Test
    void aDeadHoldersPermit_isFreedWhenItsLeaseRunsOut() throws Exception {
        String key = key("dead-holder");
        // A holder that never renews nor releases: a process that died holding the permit.
        try (CassandraLockBackend dead = open("", Duration.ofSeconds(1))) {
            assertThat(dead.tryAcquire(permit(key, 1, Duration.ofSeconds(1)))).isPresent();
        }
        RemoteSemaphore single = one.semaphore(key, 1);
        assertThat(single.tryLock())
                .as("the dead holder's permit, before its lease ran out")
                .isEmpty();
        RemoteLock permit = single.lock(WAIT);
        assertThat(permit.isHeld()).isTrue();
        permit.release();
        assertThat(cellsOf(key)).isEmpty();
    }

    @Test
    void aSemaphoreAskedWithAnotherN_isRefused_leavingNothingBehind() throws Exception {
        String key = key("mismatch");
        RemoteLock two = one.semaphore(key, 2).tryLock().orElseThrow();
        List<String> holders = cellsOf(key);
        RemoteSemaphore three = other.semaphore(key, 3);
        assertThatThrownBy(three::tryLock)
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("in use with 2 permits")
                .hasMessageContaining("asks for it with 3");
        assertThatThrownBy(() -> three.lock(WAIT))
                .isInstanceOf(LockConfigurationException.class)
                .hasMessageContaining("in use with 2 permits");
        assertThat(cellsOf(key)).as("the holder's cells alone").isEqualTo(holders);
        two.release();
        assertThat(cellsOf(key)).isEmpty();
    }

    @Test
    void cancelledAndTimedOutWaits_leaveNothingBehind() throws Exception {
        String key = key("abandoned");
        RemoteLock reader = one.readWriteLock(key).readLock().lock(WAIT);
        List<String> holder = cellsOf(key);
        CompletableFuture<RemoteLock> writer =
                other.readWriteLock(key).writeLock().lockAsync(WAIT);
        awaitQueued(key, 2);
        writer.cancel(false);
        assertThatThrownBy(writer::join).isInstanceOf(CancellationException.class);
        assertThatThrownBy(() -> other.readWriteLock(key).writeLock().lock(Duration.ofMillis(300)))
                .as("a writer whose wait ran out")
                .isInstanceOf(LockTimeoutException.class);
        awaitCells(key, holder);
        reader.release();
        assertThat(cellsOf(key)).isEmpty();
    }

    @Test
    void theLock_theReadWriteLock_andTheSemaphore_onOneKey_areApart() {
        String key = key("apart");
        try (RemoteLock lock = one.tryLock(key).orElseThrow();
                RemoteLock write =
                        other.readWriteLock(key).writeLock().tryLock().orElseThrow();
                RemoteLock permit = other.semaphore(key, 1).tryLock().orElseThrow()) {
            assertThat(List.of(lock.kind(), write.kind(), permit.kind()))
                    .containsExactly(LockKind.LOCK, LockKind.WRITE, LockKind.PERMIT);
            assertThat(CassandraKitHooks.entriesOfPartition(session, key))
                    .as("the lock's partition holds the lock's cells alone")
                    .hasSize(2);
        }
        // No lock key (at most MAX_KEY_BYTES) is a read-write lock's or a semaphore's partition, and two keys never
        // share one: the key's length says where it ends.
        for (String k : List.of(key, "a", "a~", "x".repeat(1024))) {
            for (LockKind kind : List.of(LockKind.READ, LockKind.PERMIT)) {
                assertThat(SharedEntries.partition(kind, k).getBytes(StandardCharsets.UTF_8).length)
                        .isGreaterThan(RemoteLocker.MAX_KEY_BYTES);
            }
        }
        assertThat(SharedEntries.partition(LockKind.READ, "a"))
                .isNotEqualTo(SharedEntries.partition(LockKind.READ, "a~"));
        assertThat(SharedEntries.partition(LockKind.READ, "a"))
                .isNotEqualTo(SharedEntries.partition(LockKind.PERMIT, "a"));
        assertThat(cellsOf(key)).isEmpty();
    }

    /**
     * Shared holders granted together draw their fencing tokens from the space's one counter at the same moment: every
     * draw but one starts from a guess that another's update has just made stale, is refused, and goes on from the value
     * the refusal answers. Eight drawers, five rounds started together: forty tokens, each given once, 1 to 40.
     */
    @Test
    void fencingCounter_drawnTogether_givesEachDrawItsOwnToken_fromTheValueARefusalAnswers() throws Exception {
        String row = SharedEntries.partition(LockKind.READ, key("fence-together"));
        int drawers = 8;
        int rounds = 5;
        CyclicBarrier together = new CyclicBarrier(drawers);
        List<CompletableFuture<List<Long>>> draws = new ArrayList<>();
        for (int d = 0; d < drawers; d++) {
            CassandraCalls calls = new CassandraCalls(session, "test", WAIT, Ticker.system());
            Fencing fencing = new Fencing(
                    calls,
                    new CassandraStatements(
                            session,
                            session.getKeyspace().orElseThrow().asInternal(),
                            DefaultConsistencyLevel.QUORUM,
                            DefaultConsistencyLevel.SERIAL));
            draws.add(CompletableFuture.supplyAsync(() -> {
                List<Long> tokens = new ArrayList<>();
                for (int r = 0; r < rounds; r++) {
                    try {
                        together.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException("the drawers did not meet", e);
                    }
                    tokens.add(fencing.next(row, "fence-together"));
                }
                return tokens;
            }));
        }
        List<Long> all = new ArrayList<>();
        for (CompletableFuture<List<Long>> draw : draws) {
            all.addAll(draw.get(WAIT.toMillis() * rounds, TimeUnit.MILLISECONDS));
        }
        assertThat(all)
                .as("each token given once, none skipped")
                .containsExactlyInAnyOrderElementsOf(LongStream.rangeClosed(1, (long) drawers * rounds)
                        .boxed()
                        .toList());
    }

    private static LockRequest permit(String key, int n, Duration lease) {
        return new LockRequest(key, UUID.randomUUID().toString(), lease, reason -> {}, LockKind.PERMIT, n);
    }

    /** Waits until the read-write lock's queue of {@code key} holds {@code cells} tickets. */
    private static void awaitQueued(String key, int cells) throws InterruptedException {
        String partition = SharedEntries.partition(LockKind.WRITE, key);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (CassandraKitHooks.entriesOfPartition(session, partition).stream()
                        .filter(c -> c.startsWith(CassandraStatements.QUEUE_TABLE))
                        .count()
                < cells) {
            assertThat(System.nanoTime() - deadline)
                    .as("%s tickets queued", cells)
                    .isNegative();
            Thread.sleep(20);
        }
    }

    /** Waits until the cells of {@code key} are {@code expected} (a cancelled wait withdraws on its own thread). */
    private static void awaitCells(String key, List<String> expected) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!cellsOf(key).equals(expected)) {
            assertThat(System.nanoTime() - deadline)
                    .as("cells %s, expected %s", cellsOf(key), expected)
                    .isNegative();
            Thread.sleep(20);
        }
    }
}
