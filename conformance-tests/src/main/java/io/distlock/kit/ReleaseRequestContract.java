package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.Capabilities;
import io.distlock.LockHolder;
import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Asking a holder to let go ({@link RemoteLocker#requestRelease}, {@link Capabilities.Operation#REQUEST_RELEASE}):
 * another locker's request reaches the holder's {@link RemoteLock#onReleaseRequested} listener within the bound —
 * once per request — and the holder decides; a holder without a listener keeps its lock, and hears a request kept for
 * it when it registers one; a request for a free key reaches no later holder.
 */
public interface ReleaseRequestContract extends LockerFixture {

    /**
     * How long a request may take to reach a holder: a third of the lease (the renewal period, for backends that read
     * requests at renewal) plus the store's expiry slack.
     */
    private Duration askedWithin() {
        return leaseTime().dividedBy(3).plus(expirySlack());
    }

    /**
     * Another locker asks the holder to let go: the request names the holder (its owner id and label), the holder's
     * listener runs once within the bound and releases, and the asker's waiting call is granted the key. A second
     * request reaches the next holder the same way. The time each request took is logged.
     */
    @Test
    @Requires(Need.RELEASE_REQUESTS)
    default void requestRelease_fromAnotherLocker_reachesTheHoldersListener_once_withinTheBound() throws Exception {
        String key = TestKeys.unique("request-release");
        try (RemoteLocker holder = openLocker(leaseTime());
                RemoteLocker asker = openLocker(leaseTime())) {
            List<Long> tookMillis = new ArrayList<>();
            for (int round = 0; round < 2; round++) {
                RemoteLock lock = holder.lock(key, maxWait());
                AtomicInteger heard = new AtomicInteger();
                List<Long> heardAt = Collections.synchronizedList(new ArrayList<>());
                lock.onReleaseRequested(l -> {
                    heardAt.add(System.nanoTime());
                    heard.incrementAndGet();
                    l.release();
                });
                long asked = System.nanoTime();
                List<LockHolder> holders = asker.requestRelease(key);
                assertEquals(1, holders.size(), "the holders asked to let go of '" + key + "': " + holders);
                assertEquals(lock.ownerId(), holders.get(0).ownerId(), "the holder asked");
                assertEquals(holder.ownerLabel(), holders.get(0).ownerLabel(), "the label of the holder asked");
                try (RemoteLock next = asker.lock(key, askedWithin().plus(maxWait()))) {
                    assertTrue(next.isHeld());
                    assertEquals(1, heard.get(), "the holder's listener ran " + heard.get() + " times");
                    long took = heardAt.get(0) - asked;
                    tookMillis.add(took / 1_000_000);
                    assertTrue(
                            took <= askedWithin().toNanos(),
                            "round " + round + ": the request reached the holder after " + took / 1_000_000
                                    + " ms; bound " + askedWithin().toMillis() + " ms");
                }
            }
            LoggerFactory.getLogger(ReleaseRequestContract.class)
                    .info(
                            "A release request reached its holder in {} ms (bound {} ms, lease {} ms)",
                            tookMillis,
                            askedWithin().toMillis(),
                            leaseTime().toMillis());
        }
    }

    /**
     * A holder with no {@code onReleaseRequested} listener keeps its lock when asked (nobody else can take it for
     * longer than the bound), and a listener it registers afterwards hears the request that came first, at once — and
     * only once while the lock is held a lease longer (renewed meanwhile).
     */
    @Test
    @Requires(Need.RELEASE_REQUESTS)
    default void requestRelease_toAHolderWithoutAListener_keepsTheLock_untilItListens() throws Exception {
        String key = TestKeys.unique("request-release-unheard");
        try (RemoteLocker holder = openLocker(leaseTime());
                RemoteLocker asker = openLocker(leaseTime())) {
            RemoteLock lock = holder.lock(key, maxWait());
            assertEquals(1, asker.requestRelease(key).size());
            Duration bound = askedWithin();
            assertTrue(
                    Deadlines.holdsFor(bound, () -> lock.isHeld()),
                    "a holder without a listener lost '" + key + "' after a release request");
            Optional<RemoteLock> taken = asker.tryLock(key);
            taken.ifPresent(RemoteLock::close);
            assertFalse(taken.isPresent(), "the asker took '" + key + "' from a holder that was only asked");
            AtomicInteger heard = new AtomicInteger();
            lock.onReleaseRequested(l -> heard.incrementAndGet());
            Deadlines.await(
                    () -> heard.get() == 1,
                    maxWait(),
                    () -> "a listener registered after the request never heard it (" + heard.get() + " calls)");
            assertTrue(
                    Deadlines.holdsFor(leaseTime(), () -> heard.get() == 1 && lock.isHeld()),
                    "one request ran the listener " + heard.get() + " times while the lock was renewed (held: "
                            + lock.isHeld() + ")");
            lock.release();
        }
    }

    /**
     * A request for a free key asks nobody and leaves nothing behind: the next holder of the key is never asked, and
     * the asker's locker can take and release the key as usual. Bad input is refused, and a closed locker says so.
     */
    @Test
    @Requires(Need.RELEASE_REQUESTS)
    default void requestRelease_ofAFreeKey_asksNobody_andReachesNoLaterHolder() throws Exception {
        String key = TestKeys.unique("request-release-free");
        RemoteLocker asker = openLocker(leaseTime());
        try (RemoteLocker holder = openLocker(leaseTime())) {
            assertEquals(List.of(), asker.requestRelease(key), "the holders of a free key");
            RemoteLock before = holder.lock(key, maxWait());
            before.release(); // a holder that came and went before the request below
            assertEquals(List.of(), asker.requestRelease(key), "the holders of a key released");
            RemoteLock lock = holder.lock(key, maxWait());
            AtomicInteger heard = new AtomicInteger();
            lock.onReleaseRequested(l -> heard.incrementAndGet());
            assertTrue(
                    Deadlines.holdsFor(askedWithin(), () -> heard.get() == 0),
                    "a holder that came after the requests was asked to let go");
            lock.release();
            assertThrows(NullPointerException.class, () -> asker.requestRelease(null));
            assertThrows(IllegalArgumentException.class, () -> asker.requestRelease(" "));
            Lockers.assertNothingLeft(this, asker, maxWait(), key);
        } finally {
            asker.close();
        }
        assertThrows(LockerClosedException.class, () -> asker.requestRelease(key));
    }
}
