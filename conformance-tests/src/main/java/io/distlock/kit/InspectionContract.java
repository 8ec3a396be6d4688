package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.LockerClosedException;
import io.distlock.ReleaseResult;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Operating locks ({@link Capabilities.Operation}), for backends that declare them: a look-up ({@link
 * RemoteLocker#inspect}) shows each holder of a key with its locker's owner label, kind, fencing token and the times the
 * store keeps, read from the store by another locker; a listing ({@link RemoteLocker#listHeld}) shows the held keys,
 * odd ones included, and not the released ones; breaking a key ({@link RemoteLocker#breakLock}) tells its holder and
 * serves the next waiter.
 */
public interface InspectionContract extends LockerFixture {

    /** The label of the kit's labelled lockers: a slash, a space, a bar and a non-ASCII letter, which ids encode. */
    String LABEL = "kit holder/1 | é";

    /** A locker with {@code label} and the fixture's lease. */
    private RemoteLocker labelled(String label) {
        return lockerBuilder().ownerLabel(label).leaseTime(leaseTime()).build();
    }

    /** The one holder of {@code key} in {@code state}, with the kind and label given. */
    private static LockHolder onlyHolder(LockState state, String key, LockKind kind, String label) {
        assertEquals(key, state.key(), "the key of the look-up");
        assertEquals(1, state.holders().size(), "holders of '" + key + "': " + state.holders());
        LockHolder holder = state.holders().get(0);
        assertEquals(kind, holder.kind(), "the kind of the holder of '" + key + "'");
        assertEquals(label, holder.ownerLabel(), "the owner label stored with '" + key + "'");
        return holder;
    }

    /**
     * Another locker's look-up shows the holder: its label (which the owner id encodes), its owner id, its fencing
     * token where the backend fences (none where it does not), since when it holds and when its lease ends where the
     * store keeps them (a lease with a time to live of its own always has an end), all within the real times; and a
     * released key as free.
     */
    @Test
    @Requires(Need.INSPECTION)
    default void inspect_showsTheHoldersLabel_token_andTimes_toAnotherLocker() throws Exception {
        String key = TestKeys.unique("inspect");
        Duration slack = expirySlack();
        try (RemoteLocker holder = labelled(LABEL);
                RemoteLocker other = openLocker(leaseTime())) {
            Capabilities capabilities = other.capabilities();
            Instant before = Instant.now();
            RemoteLock lock = holder.lock(key, maxWait());
            Instant after = Instant.now();
            LockHolder shown = onlyHolder(other.inspect(key), key, LockKind.LOCK, LABEL);
            assertEquals(lock.ownerId(), shown.ownerId(), "the owner id stored with '" + key + "'");
            if (capabilities.fencing()) {
                assertEquals(lock.fencingToken(), shown.fencingToken(), "the fencing token of '" + key + "'");
            } else {
                assertTrue(shown.fencingToken().isEmpty(), "a fencing token from a backend that declares none");
            }
            shown.since().ifPresent(at -> assertWithin(at, before.minus(slack), after.plus(slack), "since"));
            if (capabilities.leaseModel() == LeaseModel.RENEWED_TTL) {
                assertTrue(shown.leaseEnds().isPresent(), "no lease end for an entry with a time to live of its own");
            }
            shown.leaseEnds()
                    .ifPresent(end -> assertWithin(
                            end,
                            before.minus(slack),
                            Instant.now().plus(leaseTime()).plus(slack),
                            "leaseEnds"));
            assertEquals(ReleaseResult.RELEASED, lock.release());
            LockState free = other.inspect(key);
            assertFalse(free.held(), "'" + key + "' after its release: " + free.holders());
        }
    }

    /**
     * Every holder of a key's three spaces is shown with its kind and label: two readers of the read-write lock, a
     * permit of the semaphore and the lock, held by two labelled lockers.
     */
    @Test
    @Requires({Need.INSPECTION, Need.READ_WRITE_LOCKS, Need.SEMAPHORES})
    default void inspect_showsEveryHolderOfTheKeysSpaces_withItsKind() throws Exception {
        String key = TestKeys.unique("inspect-kinds");
        try (RemoteLocker a = labelled("kit-a");
                RemoteLocker b = labelled("kit-b")) {
            List<RemoteLock> held = new ArrayList<>();
            try {
                held.add(a.readWriteLock(key).readLock().lock(maxWait()));
                held.add(Lockers.lock(b, key, maxWait(), () -> "the lock on '" + key + "' beside its readers"));
                held.add(b.readWriteLock(key).readLock().lockAsync(maxWait()).get());
                held.add(a.semaphore(key, 2).lock(maxWait()));
                Map<String, Long> shown = a.inspect(key).holders().stream()
                        .collect(Collectors.groupingBy(
                                h -> h.kind().label() + " by " + h.ownerLabel(), Collectors.counting()));
                assertEquals(
                        Map.of("read by kit-a", 1L, "read by kit-b", 1L, "lock by kit-b", 1L, "permit by kit-a", 1L),
                        shown,
                        "the holders of '" + key + "'");
            } finally {
                held.forEach(RemoteLock::close);
            }
            assertFalse(a.inspect(key).held(), "'" + key + "' after every release");
        }
    }

    /**
     * A fair backend's queue is counted: one waiter behind the holder is shown, and none once it gave up. Where waiters
     * poll (no queue in the store) the count is absent.
     */
    @Test
    @Requires(Need.INSPECTION)
    default void inspect_countsTheWaiters_whereTheStoreKeepsAQueue() throws Exception {
        String key = TestKeys.unique("inspect-waiting");
        try (Lockers lockers = Lockers.open(this, 2, leaseTime())) {
            RemoteLocker observer = lockers.get(0);
            boolean fair = observer.capabilities().fair();
            try (RemoteLock held = observer.lock(key, maxWait())) {
                CompletableFuture<RemoteLock> waiter = lockers.get(1).lockAsync(key, maxWait());
                if (!fair) {
                    waiter.cancel(false);
                    return;
                }
                Deadlines.await(
                        () -> observer.inspect(key).waiting().orElse(-1) == 1,
                        maxWait(),
                        () -> "one waiter queued behind the holder of '" + key + "' is not counted: "
                                + observer.inspect(key));
                waiter.cancel(false);
                Deadlines.await(
                        () -> observer.inspect(key).waiting().orElse(-1) == 0,
                        maxWait(),
                        () -> "a waiter that gave up on '" + key + "' is still counted: " + observer.inspect(key));
                assertTrue(held.isHeld());
            }
        }
    }

    /**
     * The listing shows every key held under the namespace with its holder, odd keys (slashes, spaces, non-ASCII)
     * decoded back to the application's names, and no key released before it.
     */
    @Test
    @Requires(Need.INSPECTION)
    default void listHeld_showsTheHeldKeys_andNotTheReleasedOnes() throws Exception {
        String plain = TestKeys.unique("listed");
        String odd = plain + "/odd key é";
        String released = plain + "-released";
        try (RemoteLocker holder = labelled(LABEL);
                RemoteLocker other = openLocker(leaseTime())) {
            List<RemoteLock> held = List.of(holder.lock(plain, maxWait()), holder.lock(odd, maxWait()));
            try {
                holder.lock(released, maxWait()).release();
                Map<String, LockState> listed = other.listHeld().stream()
                        .filter(s -> s.key().startsWith(plain))
                        .collect(Collectors.toMap(LockState::key, Function.identity()));
                assertEquals(
                        java.util.Set.of(plain, odd),
                        listed.keySet(),
                        "the held keys listed (the released one must not be)");
                onlyHolder(listed.get(plain), plain, LockKind.LOCK, LABEL);
                onlyHolder(listed.get(odd), odd, LockKind.LOCK, LABEL);
            } finally {
                held.forEach(RemoteLock::close);
            }
            assertTrue(
                    other.listHeld().stream().noneMatch(s -> s.key().startsWith(plain)),
                    "keys listed after their release");
        }
    }

    /**
     * Breaking a held key deletes its holder's entry behind its back: the call returns the holder (label, kind), the
     * holder is told within the bound of an entry deleted by hand ({@link StoreFaults#deletionNoticedWithin()}, else
     * the lease time), its release answers {@link ReleaseResult#ALREADY_LOST}, and the waiter queued behind it is
     * granted. Breaking a free key deletes nothing.
     */
    @Test
    @Requires(Need.BREAK)
    default void breakLock_tellsTheHolder_andGrantsTheNextWaiter() throws Exception {
        String key = TestKeys.unique("broken");
        try (RemoteLocker holder = labelled(LABEL);
                Lockers others = Lockers.open(this, 2, leaseTime())) {
            RemoteLock held = holder.lock(key, maxWait());
            CountDownLatch lost = new CountDownLatch(1);
            held.onLost(l -> lost.countDown());
            CompletableFuture<RemoteLock> waiter = others.get(0).lockAsync(key, maxWait());
            List<LockHolder> broken = others.get(1).breakLock(key);
            assertEquals(1, broken.size(), "the holders broken: " + broken);
            assertEquals(LABEL, broken.get(0).ownerLabel(), "the label of the holder broken");
            assertEquals(held.ownerId(), broken.get(0).ownerId(), "the owner id of the holder broken");
            Duration bound = TestTimeouts.scaled(
                    storeFaults().map(StoreFaults::deletionNoticedWithin).orElse(leaseTime()));
            assertTrue(
                    lost.await(bound.toNanos(), TimeUnit.NANOSECONDS),
                    "the holder of '" + key + "' was not told within " + DurationText.of(bound)
                            + " that its lock was broken");
            assertFalse(held.isHeld(), "isHeld() after the break");
            assertEquals(ReleaseResult.ALREADY_LOST, held.release(), "the release of a broken lock");
            try (RemoteLock next = waiter.get(maxWait().toNanos(), TimeUnit.NANOSECONDS)) {
                assertTrue(next.isHeld(), "the waiter behind the broken holder");
            }
            assertTrue(others.get(1).breakLock(key).isEmpty(), "breaking '" + key + "' once it is free");
        }
    }

    /** Breaking a shared key deletes every holder's entry (both readers of its read-write lock), and each is told. */
    @Test
    @Requires({Need.BREAK, Need.READ_WRITE_LOCKS})
    default void breakLock_ofASharedKey_deletesEveryHolder() throws Exception {
        String key = TestKeys.unique("broken-shared");
        try (RemoteLocker a = labelled("kit-a");
                RemoteLocker b = labelled("kit-b");
                RemoteLocker operator = openLocker(leaseTime())) {
            RemoteLock first = a.readWriteLock(key).readLock().lock(maxWait());
            RemoteLock second = b.readWriteLock(key).readLock().lock(maxWait());
            CountDownLatch lost = new CountDownLatch(2);
            first.onLost(l -> lost.countDown());
            second.onLost(l -> lost.countDown());
            List<String> broken = operator.breakLock(key).stream()
                    .map(h -> h.kind().label() + " by " + h.ownerLabel())
                    .sorted()
                    .toList();
            assertEquals(List.of("read by kit-a", "read by kit-b"), broken, "the holders broken");
            Duration bound = TestTimeouts.scaled(
                    storeFaults().map(StoreFaults::deletionNoticedWithin).orElse(leaseTime()));
            assertTrue(
                    lost.await(bound.toNanos(), TimeUnit.NANOSECONDS),
                    "the readers of '" + key + "' were not both told within " + DurationText.of(bound)
                            + " that they were broken");
            try (RemoteLock writer = operator.readWriteLock(key).writeLock().lock(maxWait())) {
                assertTrue(writer.isHeld(), "a writer after the readers were broken");
            }
        }
    }

    /** A blank or over-long key, and a closed locker, are refused by the look-up, the listing and the break. */
    @Test
    @Requires(Need.INSPECTION)
    default void inspection_badInput_isRefused() {
        RemoteLocker locker = openLocker(leaseTime());
        assertThrows(IllegalArgumentException.class, () -> locker.inspect(" "));
        assertThrows(
                IllegalArgumentException.class,
                () -> locker.inspect("k".repeat(RemoteLocker.MAX_KEY_BYTES + 1)),
                "a key over " + RemoteLocker.MAX_KEY_BYTES + " bytes");
        assertThrows(IllegalArgumentException.class, () -> locker.breakLock(""));
        locker.close();
        assertThrows(LockerClosedException.class, () -> locker.inspect("k"));
        assertThrows(LockerClosedException.class, locker::listHeld);
        assertThrows(LockerClosedException.class, () -> locker.breakLock("k"));
    }

    private static void assertWithin(Instant at, Instant from, Instant to, String what) {
        assertTrue(
                !at.isBefore(from) && !at.isAfter(to),
                what + " " + at + " is not within [" + from + ", " + to + "]: " + Optional.of(at));
    }
}
