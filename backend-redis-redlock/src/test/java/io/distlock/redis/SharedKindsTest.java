package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.LockTimeoutException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.RemoteReadWriteLock;
import io.distlock.Ticker;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.testing.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Read-write locks and semaphores on one master and on Redlock over five (three for the quorum): the holders' sets
 * ({@code shared.lua}), what they grant and what they leave in the store.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SharedKindsTest {

    @RegisterExtension
    static final RedisServers REDIS = RedisServers.builder().servers(5).build();

    private static final Duration LEASE = TestTimeouts.scaled(Duration.ofSeconds(5));
    private static RedisProbe probe;

    @BeforeAll
    static void probe() {
        probe = new RedisProbe(REDIS.endpoints());
    }

    @AfterAll
    static void closeProbe() {
        probe.close();
    }

    private static List<String> endpoints(int masters) {
        return REDIS.endpoints().subList(0, masters);
    }

    private static RemoteLocker locker(int masters) {
        // a tenth of the lease per master, the most the ttl allows: a loaded machine's slow answer is no outage here
        String uri = (masters == 1 ? "redis://" : "redlock://") + String.join(",", endpoints(masters))
                + "?instanceTimeout=" + LEASE.dividedBy(10).toMillis() + "ms";
        return RemoteLockers.builder()
                .uri(uri)
                .leaseTime(LEASE)
                .connectTimeout(TestTimeouts.scaled(Duration.ofSeconds(5)))
                .build();
    }

    /** Everything under the key's name on the first {@code masters} masters: the lock, and both spaces' sets. */
    private static Map<String, List<String>> stored(String key, int masters) {
        return probe.keys("distlock:" + key, IntStream.range(0, masters).boxed().toList());
    }

    /**
     * {@link #stored}, once each of the first {@code masters} masters holds {@code keys} keys of {@code key}: a grant is
     * decided when a quorum said yes, and the other masters' writes may still be on their way.
     */
    private static Map<String, List<String>> storedOnEveryMaster(String key, int masters, int keys) {
        Deadlines.await(
                () -> {
                    Map<String, List<String>> now = stored(key, masters);
                    return now.size() == masters && now.values().stream().allMatch(entries -> entries.size() == keys);
                },
                Duration.ofSeconds(10),
                () -> "every one of " + masters + " master(s) holding " + keys + " key(s) of '" + key + "': "
                        + stored(key, masters));
        return stored(key, masters);
    }

    @ParameterizedTest(name = "{0} master(s)")
    @ValueSource(ints = {1, 5})
    void readers_share_writerExcludes_bothWays(int masters) throws Exception {
        String key = RedisProbe.uniqueKey("rw");
        // one locker per holder at a time: a locker refuses a second grant in one space to one thread
        try (RemoteLocker a = locker(masters);
                RemoteLocker b = locker(masters);
                RemoteLocker c = locker(masters)) {
            RemoteReadWriteLock rwA = a.readWriteLock(key);
            RemoteReadWriteLock rwB = b.readWriteLock(key);
            RemoteLock read1 = rwA.readLock().tryLock().orElseThrow();
            RemoteLock read2 = rwB.readLock().tryLock().orElseThrow();
            assertThat(read1.kind()).isEqualTo(LockKind.READ);
            assertThat(read1.isHeld() && read2.isHeld()).isTrue();
            assertThat(c.readWriteLock(key).writeLock().tryLock())
                    .as("a writer beside readers")
                    .isEmpty();
            read1.close();
            assertThat(c.readWriteLock(key).writeLock().tryLock())
                    .as("beside one reader")
                    .isEmpty();
            read2.close();
            try (RemoteLock write = rwB.writeLock().tryLock().orElseThrow()) {
                assertThat(write.kind()).isEqualTo(LockKind.WRITE);
                assertThat(rwA.readLock().tryLock())
                        .as("a reader beside the writer")
                        .isEmpty();
                assertThat(rwA.writeLock().tryLock()).as("a second writer").isEmpty();
            }
            assertThat(rwA.readLock().tryLock()).as("after the writer").hasValueSatisfying(RemoteLock::close);
        }
        assertThat(stored(key, masters)).as("nothing left after the releases").isEmpty();
    }

    @ParameterizedTest(name = "{0} master(s)")
    @ValueSource(ints = {1, 5})
    void semaphore_boundsHoldersToN_acrossLockers(int masters) throws Exception {
        String key = RedisProbe.uniqueKey("sem");
        try (RemoteLocker a = locker(masters);
                RemoteLocker b = locker(masters);
                RemoteLocker c = locker(masters);
                RemoteLocker d = locker(masters)) {
            RemoteLock first = a.semaphore(key, 2).tryLock().orElseThrow();
            RemoteLock second = b.semaphore(key, 2).tryLock().orElseThrow();
            assertThat(first.kind()).isEqualTo(LockKind.PERMIT);
            assertThat(d.semaphore(key, 2).tryLock()).as("a third permit of 2").isEmpty();
            CompletableFuture<RemoteLock> waiting = c.semaphore(key, 2).lockAsync(LEASE.multipliedBy(4));
            second.close();
            try (RemoteLock third = waiting.get(LEASE.toMillis() * 4, TimeUnit.MILLISECONDS)) {
                assertThat(third.isHeld()).isTrue();
                assertThat(d.semaphore(key, 2).tryLock())
                        .as("a third permit, again")
                        .isEmpty();
            }
            first.close();
        }
        assertThat(stored(key, masters)).isEmpty();
    }

    /**
     * A permit holder that stops renewing (dead) frees its permit when its own expiry passes, though another holder
     * keeps the set (and the key's time to live) alive: every script drops the expired holders first.
     */
    @ParameterizedTest(name = "{0} master(s)")
    @ValueSource(ints = {1, 5})
    void permit_ofAHolderThatStoppedRenewing_isFreedAtItsOwnExpiry(int masters) throws Exception {
        String key = RedisProbe.uniqueKey("expiry");
        Duration shortLease = TestTimeouts.scaled(Duration.ofMillis(1500));
        try (LockBackend backend = Backends.open(endpoints(masters), LEASE, Ticker.system(), Map.of());
                RemoteLocker live = locker(masters);
                RemoteLocker other = locker(masters)) {
            LockRequest dead =
                    new LockRequest(key, UUID.randomUUID() + ".dead", shortLease, r -> {}, LockKind.PERMIT, 2);
            assertThat(backend.tryAcquire(dead)).as("the holder that will die").isPresent();
            try (RemoteLock kept = live.semaphore(key, 2).tryLock().orElseThrow()) {
                assertThat(other.semaphore(key, 2).tryLock())
                        .as("both permits held")
                        .isEmpty();
                long until = System.nanoTime() + shortLease.multipliedBy(3).toNanos();
                Optional<RemoteLock> freed = Optional.empty();
                while (freed.isEmpty() && System.nanoTime() < until) {
                    Thread.sleep(50);
                    freed = other.semaphore(key, 2).tryLock();
                }
                assertThat(freed)
                        .as("the dead holder's permit, after its lease")
                        .isPresent();
                freed.get().close();
                assertThat(kept.isHeld()).isTrue();
            }
        }
        assertThat(stored(key, masters)).isEmpty();
    }

    @ParameterizedTest(name = "{0} master(s)")
    @ValueSource(ints = {1, 5})
    void semaphore_withAnotherN_isRefused_andLeavesNothing(int masters) throws Exception {
        String key = RedisProbe.uniqueKey("mismatch");
        try (RemoteLocker a = locker(masters);
                RemoteLocker b = locker(masters)) {
            try (RemoteLock held = a.semaphore(key, 2).tryLock().orElseThrow()) {
                Map<String, List<String>> before = storedOnEveryMaster(key, masters, 1);
                assertThatThrownBy(() -> b.semaphore(key, 3).tryLock())
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("in use with 2 permits")
                        .hasMessageContaining("asks for it with 3");
                assertThatThrownBy(() -> b.semaphore(key, 1).lock(LEASE))
                        .isInstanceOf(LockConfigurationException.class)
                        .hasMessageContaining("in use with 2 permits");
                assertThat(stored(key, masters)).as("only the holder").isEqualTo(before);
                assertThat(held.isHeld()).isTrue();
            }
            try (RemoteLock other = b.semaphore(key, 3).tryLock().orElseThrow()) {
                assertThat(other.isHeld())
                        .as("another N once the semaphore is free")
                        .isTrue();
            }
        }
        assertThat(stored(key, masters)).isEmpty();
    }

    @ParameterizedTest(name = "{0} master(s)")
    @ValueSource(ints = {1, 5})
    void asyncWaiters_cancelledOrTimedOut_leaveNothing_andNeverHold(int masters) throws Exception {
        String key = RedisProbe.uniqueKey("cancel");
        try (RemoteLocker a = locker(masters);
                RemoteLocker b = locker(masters)) {
            RemoteLock write = a.readWriteLock(key).writeLock().tryLock().orElseThrow();
            RemoteLock permit = a.semaphore(key, 1).tryLock().orElseThrow();
            Map<String, List<String>> held = storedOnEveryMaster(key, masters, 2);
            CompletableFuture<RemoteLock> reader =
                    b.readWriteLock(key).readLock().lockAsync(LEASE.multipliedBy(10));
            CompletableFuture<RemoteLock> writer =
                    b.readWriteLock(key).writeLock().lockAsync(LEASE.multipliedBy(10));
            CompletableFuture<RemoteLock> permitWaiter = b.semaphore(key, 1).lockAsync(LEASE.multipliedBy(10));
            assertThatThrownBy(() -> b.readWriteLock(key).readLock().lock(Duration.ofMillis(300)))
                    .as("a reader that times out")
                    .isInstanceOf(LockTimeoutException.class);
            Thread.sleep(200);
            reader.cancel(true);
            writer.cancel(true);
            permitWaiter.cancel(true);
            assertThat(stored(key, masters)).as("only the holders").isEqualTo(held);
            write.close();
            permit.close();
            // the cancelled waiters never take what was freed: past their poll interval, nothing is held
            Thread.sleep(LEASE.toMillis() / 3);
            assertThat(stored(key, masters))
                    .as("nothing once the holders released")
                    .isEmpty();
        }
    }

    /** The lock, the read-write lock and the semaphore on one key: three sets of names, none excluding another. */
    @ParameterizedTest(name = "{0} master(s)")
    @ValueSource(ints = {1, 5})
    void lock_readWriteLock_semaphore_onOneKey_neverExcludeEachOther(int masters) throws Exception {
        String key = RedisProbe.uniqueKey("spaces");
        try (RemoteLocker a = locker(masters);
                RemoteLocker b = locker(masters)) {
            try (RemoteLock lock = a.tryLock(key).orElseThrow();
                    RemoteLock write =
                            b.readWriteLock(key).writeLock().tryLock().orElseThrow();
                    RemoteLock permit = b.semaphore(key, 1).tryLock().orElseThrow()) {
                assertThat(List.of(lock, write, permit)).allMatch(RemoteLock::isHeld);
                for (List<String> entries : storedOnEveryMaster(key, masters, 3).values()) {
                    assertThat(entries).hasSize(3);
                    assertThat(entries).anyMatch(e -> e.startsWith("distlock:" + key + "="));
                    assertThat(entries).anyMatch(e -> e.startsWith("distlock:" + key + "\uFFFDrw=[w:"));
                    assertThat(entries).anyMatch(e -> e.startsWith("distlock:" + key + "\uFFFDsem=[1:"));
                }
            }
            // a lock key that reads like a space's name as text is still another key (the space's byte is 0xFF)
            try (RemoteLock lookalike = a.tryLock(key + "\uFFFDrw").orElseThrow();
                    RemoteLock write =
                            b.readWriteLock(key).writeLock().tryLock().orElseThrow()) {
                assertThat(lookalike.isHeld() && write.isHeld()).isTrue();
            }
        }
        assertThat(stored(key, masters)).isEmpty();
    }

    /** One master of five down: shares and permits of a small N are granted by the others, as locks are. */
    @Test
    void redlock_oneMasterDown_stillGrantsShares_andPermitsOfTwo() throws Exception {
        String key = RedisProbe.uniqueKey("down");
        REDIS.node(4).kill9();
        try (RemoteLocker a = locker(5);
                RemoteLocker b = locker(5)) {
            try (RemoteLock read = a.readWriteLock(key).readLock().tryLock().orElseThrow()) {
                assertThat(b.readWriteLock(key).writeLock().tryLock()).isEmpty();
            }
            try (RemoteLock write = a.readWriteLock(key).writeLock().tryLock().orElseThrow();
                    RemoteLock permit = a.semaphore(key, 2).tryLock().orElseThrow()) {
                assertThat(write.isHeld() && permit.isHeld()).isTrue();
            }
            // N >= 4 needs all five masters (see Redlock.quorum): refused clearly while one is down
            assertThatThrownBy(() -> b.semaphore(key, 4).tryLock())
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("too few Redis masters answered");
        } finally {
            REDIS.node(4).restart();
        }
        assertThat(stored(key, 4)).isEmpty();
    }

    /**
     * Why a semaphore of N > 1 needs more than a majority: on three masters, two holders of a semaphore of 2 on
     * masters {0, 1} and {1, 2} leave master 1 full and the others with one; a third asker wins masters 0 and 2, a
     * majority, and would be a third holder of 2 permits. It needs all three here (the quorum for N = 2 on 3), so it
     * is refused.
     */
    @Test
    void permit_winningABareMajority_isRefused_whereItWouldBeTheThirdHolderOfTwo() throws Exception {
        String key = RedisProbe.uniqueKey("quorum");
        RedlockSettings names = RedlockSettings.read(new io.distlock.spi.BackendConfig(
                java.net.URI.create("redis://" + REDIS.endpoints().get(0)),
                Map.of(),
                LEASE,
                LEASE,
                Ticker.system(),
                java.time.Clock.systemUTC()));
        byte[] set = names.spaceKey(key, LockKind.Space.SEMAPHORE);
        for (int m : List.of(0, 1)) {
            probe.addHolder(m, set, "2:holder-a", LEASE);
        }
        for (int m : List.of(1, 2)) {
            probe.addHolder(m, set, "2:holder-b", LEASE);
        }
        try (RemoteLocker c = locker(3)) {
            assertThat(c.semaphore(key, 2).tryLock()).as("a third holder of 2").isEmpty();
            assertThat(stored(key, 3).values().stream().flatMap(List::stream).toList())
                    .as("the refused attempt removed itself from masters 0 and 2")
                    .map(e -> e.substring(e.indexOf('=') + 1))
                    .containsExactlyInAnyOrder("[2:holder-a]", "[2:holder-a, 2:holder-b]", "[2:holder-b]");
        }
    }
}
