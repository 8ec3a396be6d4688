package io.distlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.kit.Deadlines;
import io.distlock.kit.TestTimeouts;
import java.lang.reflect.Constructor;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskResult;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskWithResult;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * ShedLock's provider scenarios against one store, through ShedLock's own classes ({@link LockConfiguration}, {@link
 * DefaultLockingTaskExecutor}, {@link KeepAliveLockProvider}, {@link LockExtender}). A subclass names the store.
 *
 * <p>Origin: the scenarios of ShedLock's {@code shedlock-test-support} module (not published as an artifact), written
 * again here: {@code AbstractLockProviderIntegrationTest} (tests named after its {@code shouldCreateLock}, {@code
 * shouldNotReturnSecondLock}, ... in their Javadoc), {@code AbstractExtensibleLockProviderIntegrationTest} (the {@code
 * extend} tests) and {@code FuzzTester} ({@link CounterFuzz}). Where ShedLock's own tests read the store's table, these
 * ask a second node: a second locker on the same store, the way another application instance sees the lock. ShedLock's
 * expired-lock scenario keeps its 2 ms {@code lockAtMostFor}, shorter than any store's round trip (the provider returns
 * the lock already ended, as ShedLock's own providers do), beside a 300 ms one that is held and then ends; ShedLock's
 * 2 s waits are shorter here and scaled by {@value TestTimeouts#FACTOR}.
 *
 * <p>Two more scenarios cover what the provider exists for: a job started on two nodes 10 ms apart runs once (ShedLock's
 * {@code lockAtLeastFor}), and {@code KeepAliveLockProvider} keeps a lock past {@code lockAtMostFor}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 2, unit = TimeUnit.MINUTES)
abstract class LockProviderScenarios {

    /**
     * How long past an instant the tests allow for the store and the two lockers to agree that a lock ended (scaled
     * by {@link Deadlines#await}).
     */
    private static final Duration SLACK = Duration.ofSeconds(3);
    /** A lock the tests do not expect to end by itself. */
    private static final Duration LONG = Duration.ofMinutes(5);
    /** ShedLock's scenarios use 2 s; shorter here, so that seven stores fit the build's time. */
    private static final Duration LOCK_AT_LEAST_FOR = TestTimeouts.scaled(Duration.ofMillis(800));

    private RemoteLocker nodeA;
    private RemoteLocker nodeB;
    /** The provider under test, on node A. */
    private ExtensibleLockProvider provider;
    /** The same provider on node B: another instance of the application. */
    private ExtensibleLockProvider otherNode;
    /** A name of the test's own, so that locks a test leaves to expire never meet another test. */
    private String name;

    /** The URI of the store, as an application would open it. */
    abstract String lockerUri();

    /**
     * How much longer than asked the store may keep an entry: zero, except where the store rounds its time to live up
     * (Cassandra: whole seconds).
     */
    Duration storeRounding() {
        return Duration.ZERO;
    }

    /**
     * How long before {@code lockAtMostFor} has passed the lock may end when nobody unlocks it: zero, except on
     * backends whose holder counts a clock-drift allowance off its lease (Redis, Cassandra), where the locker ends the
     * lock, and deletes its entry, when that shorter validity runs out.
     */
    Duration driftAllowance(Duration lockAtMostFor) {
        return Duration.ZERO;
    }

    /** Readies the store before the nodes open (e.g. creates a schema); nothing by default. */
    void prepareStore() {}

    @BeforeAll
    void openNodes() {
        prepareStore();
        nodeA = RemoteLockers.open(lockerUri());
        nodeB = RemoteLockers.open(lockerUri());
        provider = new DistlockLockProvider(nodeA);
        otherNode = new DistlockLockProvider(nodeB);
    }

    @AfterAll
    void closeNodes() {
        if (nodeA != null) {
            nodeA.close();
        }
        if (nodeB != null) {
            nodeB.close();
        }
    }

    @BeforeEach
    void nameTheLock(TestInfo test) {
        byte[] random = new byte[4];
        ThreadLocalRandom.current().nextBytes(random);
        name = "shedlock-" + test.getTestMethod().orElseThrow().getName() + "-"
                + HexFormat.of().formatHex(random);
    }

    /** ShedLock's {@code shouldCreateLock}. */
    @Test
    void lock_isSeenByOtherNodes_untilUnlocked() {
        SimpleLock lock = lock(config(LONG, Duration.ZERO));
        assertLocked(name);

        lock.unlock();

        assertUnlocked(name);
    }

    /** ShedLock's {@code shouldNotReturnSecondLock}: the same node, even the same thread, and another node. */
    @Test
    void lock_whileHeld_isEmpty_onTheSameThreadAndNodes() throws Exception {
        SimpleLock lock = lock(config(LONG, Duration.ZERO));

        assertThat(provider.lock(config(LONG, Duration.ZERO))).isEmpty();
        assertThat(otherNode.lock(config(LONG, Duration.ZERO))).isEmpty();
        assertThat(CompletableFuture.supplyAsync(() -> provider.lock(config(LONG, Duration.ZERO)))
                        .get())
                .as("another thread of the same node")
                .isEmpty();

        lock.unlock();
    }

    /** ShedLock's {@code shouldCreateTwoIndependentLocks}. */
    @Test
    void lock_onTwoNames_areIndependent() {
        SimpleLock first = lock(config(LONG, Duration.ZERO));
        Optional<SimpleLock> second =
                provider.lock(new LockConfiguration(ClockProvider.now(), name + "-2", LONG, Duration.ZERO));

        assertThat(second).isPresent();
        first.unlock();
        second.get().unlock();
        assertUnlocked(name);
        assertUnlocked(name + "-2");
    }

    /** ShedLock's {@code shouldLockTwiceInARow}. */
    @Test
    void lock_afterUnlock_isGrantedAgain() {
        lock(config(LONG, Duration.ZERO)).unlock();

        lock(config(LONG, Duration.ZERO)).unlock();
    }

    /** ShedLock's {@code shouldBeAbleToLockRightAfterUnlock}. */
    @Test
    void lock_rightAfterUnlock_isGranted_tenTimes() {
        for (int i = 0; i < 10; i++) {
            SimpleLock lock = lock(config(LONG, Duration.ZERO));
            assertThat(provider.lock(config(LONG, Duration.ZERO))).isEmpty();
            lock.unlock();
        }
    }

    /**
     * ShedLock's {@code shouldTimeout}: a holder that never unlocks (its process died) holds the lock for {@code
     * lockAtMostFor}, then another node gets it.
     */
    @Test
    void lock_neverUnlocked_endsAfterLockAtMostFor() {
        LockConfiguration config = config(TestTimeouts.scaled(Duration.ofMillis(500)), Duration.ZERO);
        long asked = System.nanoTime();
        lock(config);
        assertLocked(name);

        long freed = awaitFreeOnOtherNode(config.getLockAtMostUntil());

        assertThat(Duration.ofNanos(freed - asked))
                .as("held for")
                .isGreaterThanOrEqualTo(config.getLockAtMostFor().minus(driftAllowance(config.getLockAtMostFor())));
        lock(config(LONG, Duration.ZERO)).unlock();
    }

    /**
     * A lock taken a while after its configuration was made (a busy scheduler thread) ends at {@code createdAt +
     * lockAtMostFor}, as ShedLock's own providers store it, not {@code lockAtMostFor} after the grant: its holder can
     * no longer extend it then, and another node gets it.
     */
    @Test
    void lock_takenLate_endsAtLockAtMostUntil() throws InterruptedException {
        LockConfiguration config = config(TestTimeouts.scaled(Duration.ofMillis(1500)), Duration.ZERO);
        Thread.sleep(200);
        SimpleLock lock = lock(config);
        sleepUntil(config.getLockAtMostUntil().plusMillis(20));

        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        awaitFreeOnOtherNode(config.getLockAtMostUntil());
    }

    /**
     * ShedLock's {@code shouldLockAtLeastFor}: unlocked at once, the lock stays held for {@code lockAtLeastFor}, for
     * its own node as for the others, then ends by itself.
     */
    @Test
    void unlock_beforeLockAtLeastFor_keepsTheLockUntilThen() {
        LockConfiguration config = config(LOCK_AT_LEAST_FOR.multipliedBy(2), LOCK_AT_LEAST_FOR);
        SimpleLock lock = lock(config);
        long unlocking = System.nanoTime();
        lock.unlock();
        // ShedLock's clock counts whole milliseconds, rounded down
        Duration left = Duration.between(ClockProvider.now(), config.getLockAtLeastUntil())
                .minusMillis(1);

        assertThat(provider.lock(config(LONG, Duration.ZERO)))
                .as("the same node")
                .isEmpty();
        assertThat(otherNode.lock(config(LONG, Duration.ZERO)))
                .as("another node")
                .isEmpty();
        long freed = awaitFreeOnOtherNode(config.getLockAtLeastUntil());

        assertThat(Duration.ofNanos(freed - unlocking))
                .as("kept after unlock for")
                .isGreaterThanOrEqualTo(left);
        lock(config(LONG, Duration.ZERO)).unlock();
    }

    /**
     * What {@code lockAtLeastFor} is for: a scheduled job that starts on two nodes 10 ms apart (their clocks differ by
     * that much, or one node is slower) runs once, through ShedLock's {@link DefaultLockingTaskExecutor}; once {@code
     * lockAtLeastFor} has passed, the next run takes place.
     */
    @Test
    void job_startedOnTwoNodes10msApart_runsOnce() throws Throwable {
        DefaultLockingTaskExecutor first = new DefaultLockingTaskExecutor(provider);
        DefaultLockingTaskExecutor second = new DefaultLockingTaskExecutor(otherNode);
        AtomicInteger runs = new AtomicInteger();
        TaskWithResult<Integer> job = runs::incrementAndGet;
        LockConfiguration firstRun = config(LONG, LOCK_AT_LEAST_FOR);

        TaskResult<Integer> onFirst = first.executeWithLock(job, firstRun);
        Thread.sleep(10);
        TaskResult<Integer> onSecond = second.executeWithLock(job, config(LONG, LOCK_AT_LEAST_FOR));

        assertThat(onFirst.wasExecuted()).as("ran on the first node").isTrue();
        assertThat(onSecond.wasExecuted()).as("ran again on the second node").isFalse();
        assertThat(runs).hasValue(1);
        awaitFreeOnOtherNode(firstRun.getLockAtLeastUntil());
        assertThat(second.executeWithLock(job, config(LONG, LOCK_AT_LEAST_FOR)).wasExecuted())
                .as("the next run, after lockAtLeastFor")
                .isTrue();
    }

    /** ShedLock's {@code fuzzTestShouldPass} ({@code FuzzTester}), its threads spread over two nodes. */
    @Test
    void lock_guardsACounter_underContention() throws Exception {
        new CounterFuzz(provider, otherNode, name, CounterFuzz.iterationsFromProperty()).run();
    }

    /**
     * ShedLock's {@code shouldBeAbleToExtendLock}: extended, the lock outlives its first {@code lockAtMostFor}, and
     * unlocks at once.
     */
    @Test
    void extend_keepsTheLockPastItsFirstLockAtMostFor() throws InterruptedException {
        LockConfiguration config = config(TestTimeouts.scaled(Duration.ofMillis(800)), Duration.ZERO);
        SimpleLock lock = lock(config);

        Optional<SimpleLock> extended = lock.extend(Duration.ofSeconds(30), Duration.ZERO);

        assertThat(extended).isPresent();
        sleepUntil(config.getLockAtMostUntil().plus(storeRounding()).plusMillis(100));
        assertLocked(name);
        extended.get().unlock();
        assertUnlocked(name);
    }

    /** ShedLock's {@code shouldNotBeAbleToExtendUnlockedLock}. */
    @Test
    void extend_afterUnlock_throws() {
        SimpleLock lock = lock(config(LONG, Duration.ZERO));
        lock.unlock();
        assertUnlocked(name);

        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO))
                .isInstanceOf(IllegalStateException.class);
    }

    /**
     * ShedLock's {@code shouldNotBeAbleToExtendExpiredLock}, with its timing: a {@code lockAtMostFor} of 2 ms, shorter
     * than the store's round trip. The provider returns the lock, as ShedLock's own providers do (it has ended by the
     * time it is returned, and a warning names the job); extending it answers empty and the lock is free.
     */
    @Test
    void extend_ofALockWhoseLockAtMostForEndedBeforeTheGrant_isEmpty() throws InterruptedException {
        LockConfiguration config = config(Duration.ofMillis(2), Duration.ZERO);
        Optional<SimpleLock> lock = provider.lock(config);
        sleepUntil(config.getLockAtMostUntil().plusMillis(1));

        assertThat(lock).as("as ShedLock's own providers answer").isPresent();
        assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        // on a SESSION store the locker's timer ends the lock and deletes its entry a moment after lockAtMostUntil
        awaitFreeOnOtherNode(config.getLockAtMostUntil());
    }

    /**
     * The same with a {@code lockAtMostFor} that outlives the round trip (300 ms): the lock is held, then ends; after
     * {@code lockAtMostFor}, extending answers empty and the lock is free.
     */
    @Test
    void extend_afterLockAtMostFor_isEmpty() throws InterruptedException {
        LockConfiguration config = config(TestTimeouts.scaled(Duration.ofMillis(300)), Duration.ZERO);
        SimpleLock lock = lock(config);
        sleepUntil(config.getLockAtMostUntil().plusMillis(20));

        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        awaitFreeOnOtherNode(config.getLockAtMostUntil());
    }

    /** ShedLock's {@code shouldBeAbleToExtendAtLeast}: the extension's {@code lockAtLeastFor} holds after unlock. */
    @Test
    void extend_withLockAtLeastFor_keepsTheLockAfterUnlock() {
        SimpleLock lock = lock(config(Duration.ofSeconds(10), Duration.ZERO));

        SimpleLock extended = extend(lock);
        extended.unlock();

        assertLocked(name);
    }

    /** ShedLock's {@code lockCanNotBeExtendedTwice}. */
    @Test
    void extend_twice_throws() {
        SimpleLock lock = lock(config(Duration.ofSeconds(10), Duration.ZERO));
        extend(lock);

        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)))
                .isInstanceOf(IllegalStateException.class);
    }

    /** ShedLock's {@code lockCanNotBeUnlockedAfterExtending}. */
    @Test
    void unlock_afterExtend_throws() {
        SimpleLock lock = lock(config(Duration.ofSeconds(10), Duration.ZERO));
        extend(lock);

        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    }

    /**
     * ShedLock's {@code KeepAliveLockProvider} over this provider keeps a job's lock for more than twice its {@code
     * lockAtMostFor}: no other node gets it meanwhile; unlocked, it is free at once.
     */
    @Test
    void keepAliveLockProvider_holdsTheLockPastLockAtMostFor() throws Exception {
        Duration lockAtMostFor = TestTimeouts.scaled(Duration.ofSeconds(1)).plus(storeRounding());
        ScheduledExecutorService keeper = Executors.newSingleThreadScheduledExecutor();
        try {
            LockProvider keepAlive = keepAlive(provider, keeper, lockAtMostFor);
            SimpleLock lock =
                    keepAlive.lock(config(lockAtMostFor, Duration.ZERO)).orElseThrow();

            assertThat(Deadlines.holdsFor(lockAtMostFor.multipliedBy(5).dividedBy(2), () -> isLockedFor(nodeB, name)))
                    .as("no other node got the lock while it was kept alive")
                    .isTrue();
            lock.unlock();
            assertUnlocked(name);
        } finally {
            keeper.shutdownNow();
        }
    }

    /**
     * ShedLock's {@link LockExtender}, called by a job that runs through {@link DefaultLockingTaskExecutor}, extends the
     * job's lock past its {@code lockAtMostFor}.
     */
    @Test
    void lockExtender_insideAJob_extendsItsLock() throws Throwable {
        LockConfiguration config = config(TestTimeouts.scaled(Duration.ofMillis(800)), Duration.ZERO);

        TaskResult<Boolean> result = new DefaultLockingTaskExecutor(provider)
                .executeWithLock(
                        () -> {
                            LockExtender.extendActiveLock(Duration.ofSeconds(30), Duration.ZERO);
                            sleepUntil(config.getLockAtMostUntil()
                                    .plus(storeRounding())
                                    .plusMillis(100));
                            return isLockedFor(nodeB, name);
                        },
                        config);

        assertThat(result.getResult())
                .as("locked for other nodes past lockAtMostFor")
                .isTrue();
        assertUnlocked(name);
    }

    /** ShedLock's {@code KeepAliveLockProvider} with a shorter minimum than its public constructor's 30 s. */
    private static LockProvider keepAlive(
            ExtensibleLockProvider wrapped, ScheduledExecutorService executor, Duration minimalLockAtMostFor)
            throws ReflectiveOperationException {
        // The package-private constructor ShedLock's own tests use; 30 s leases would make this test last a minute.
        Constructor<KeepAliveLockProvider> constructor = KeepAliveLockProvider.class.getDeclaredConstructor(
                ExtensibleLockProvider.class, ScheduledExecutorService.class, Duration.class);
        constructor.setAccessible(true);
        return constructor.newInstance(wrapped, executor, minimalLockAtMostFor);
    }

    private LockConfiguration config(Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    private SimpleLock lock(LockConfiguration config) {
        Optional<SimpleLock> lock = provider.lock(config);
        assertThat(lock).as("lock %s", config).isPresent();
        return lock.get();
    }

    private static SimpleLock extend(SimpleLock lock) {
        Optional<SimpleLock> extended = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9));
        assertThat(extended).as("extended").isPresent();
        return extended.get();
    }

    /** The other node cannot take {@code key} with a plain distlock lock: the lock name is the key. */
    private void assertLocked(String key) {
        assertThat(isLockedFor(nodeB, key))
                .as("'%s' locked for the other node", key)
                .isTrue();
    }

    /** The other node can take {@code key} now (and gives it back). */
    private void assertUnlocked(String key) {
        assertThat(isLockedFor(nodeB, key))
                .as("'%s' locked for the other node", key)
                .isFalse();
    }

    /** Whether {@code node} is refused {@code key}; a lock it gets is released at once. */
    private static boolean isLockedFor(RemoteLocker node, String key) {
        Optional<RemoteLock> lock = node.tryLock(key);
        lock.ifPresent(RemoteLock::release);
        return lock.isEmpty();
    }

    /**
     * Waits until the other node gets the test's lock, at most until {@code end} (plus the store's rounding and some
     * slack), and says when it got it ({@link System#nanoTime()}, the clock the locker times leases with).
     */
    private long awaitFreeOnOtherNode(Instant end) {
        Duration timeout = Duration.between(ClockProvider.now(), end).plus(storeRounding());
        long[] freed = new long[1];
        Deadlines.await(
                () -> {
                    if (isLockedFor(nodeB, name)) {
                        return false;
                    }
                    freed[0] = System.nanoTime();
                    return true;
                },
                (timeout.isNegative() ? Duration.ZERO : timeout).plus(SLACK),
                () -> "'" + name + "' not free for the other node by " + end + " + " + storeRounding());
        return freed[0];
    }

    /** Lets time pass until {@code instant} (ShedLock's clock): the scenarios that are about time passing. */
    private static void sleepUntil(Instant instant) throws InterruptedException {
        long millis = Duration.between(ClockProvider.now(), instant).toMillis();
        if (millis > 0) {
            Thread.sleep(millis);
        }
    }
}
