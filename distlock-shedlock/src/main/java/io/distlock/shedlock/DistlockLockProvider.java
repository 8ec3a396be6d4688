package io.distlock.shedlock;

import io.distlock.LeaseModel;
import io.distlock.LockerClosedException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link ExtensibleLockProvider} on any distlock backend: a {@code @SchedulerLock} job runs on one node at a
 * time, wherever the application's {@link RemoteLocker} keeps its locks.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(RemoteLocker locker) {
 *     return new DistlockLockProvider(locker);
 * }
 * }</pre>
 *
 * <p>ShedLock's semantics, mapped onto distlock's fixed leases:
 *
 * <ul>
 *   <li>{@link #lock(LockConfiguration)} is one attempt, {@link RemoteLocker#tryLockFor} on the lock's name (the name
 *       is the key, as is: a plain {@code locker.tryLock(name)} elsewhere excludes the job and the other way round),
 *       for a fixed lease, not renewed, that ends at ShedLock's {@code lockAtMostUntil} ({@code createdAt +
 *       lockAtMostFor}, as ShedLock's own providers store it). A {@code lockAtMostFor} under a second is asked of the
 *       store as one second and set back after the grant; one that has ended before the grant arrived gives a lock
 *       already ended (as ShedLock's own providers do; the job runs unprotected, with a warning naming it), on every
 *       store alike. A holder that never unlocks, or whose process dies,
 *       holds the lock at most that long. A live holder's locker ends it when its validity runs out, which on Redis and
 *       Cassandra is the backend's clock-drift allowance earlier; a dead process's lock ends when a {@link
 *       LeaseModel#RENEWED_TTL} store drops it (Cassandra: up to 2 s later, its TTLs count whole seconds), or on
 *       {@link LeaseModel#SESSION} backends (ZooKeeper, etcd) when the store expires its session, which may be
 *       sooner or later than {@code lockAtMostFor}.
 *   <li>{@link SimpleLock#unlock()} keeps the lock until {@code lockAtLeastUntil} (read on ShedLock's {@code
 *       ClockProvider}) with {@link RemoteLock#releaseAfter}, so a job that ran on one node is not run again on another
 *       before {@code lockAtLeastFor} has passed. On {@link LeaseModel#SESSION} backends that delay is kept while the
 *       process and its locker live: closing the locker or a crash frees the lock at once or at session expiry.
 *   <li>{@link SimpleLock#extend(Duration, Duration)} sets the lease to end {@code lockAtMostFor} from now with {@link
 *       RemoteLock#extend} and returns a new lock carrying the new {@code lockAtLeastFor}; the old one can no longer be
 *       used. It returns empty once the lock has ended, so ShedLock's {@code KeepAliveLockProvider} and {@code
 *       LockExtender} work on every backend.
 * </ul>
 *
 * <p>The provider does not own the locker: it never closes it; close it on shutdown as usual. Thread-safe.
 */
public final class DistlockLockProvider implements ExtensibleLockProvider {

    private static final Logger log = LoggerFactory.getLogger(DistlockLockProvider.class);

    /**
     * The shortest lease asked of the store: longer than any round trip and clock-drift allowance, so that the grant is
     * still valid when it arrives. A shorter {@code lockAtMostFor} is set back after the grant.
     */
    private static final Duration SHORTEST_LEASE_ASKED = Duration.ofSeconds(1);

    private final RemoteLocker locker;

    /**
     * Creates a provider that takes its locks through {@code locker}.
     *
     * @param locker the application's locker, shared with any other use; not closed by the provider
     * @throws NullPointerException if {@code locker} is null
     */
    public DistlockLockProvider(RemoteLocker locker) {
        this.locker = Objects.requireNonNull(locker, "locker");
    }

    /**
     * Makes one attempt to take the lock named {@code configuration.getName()} until its {@code lockAtMostUntil}
     * ({@code createdAt + lockAtMostFor}, on ShedLock's clock); never waits for its holder. Blocks only for the
     * store's round trips.
     *
     * @return the held lock, or empty if another node or thread holds it (the calling thread too: a second attempt
     *     of the thread that holds the name is answered empty, as ShedLock expects, not refused), or if {@code
     *     lockAtMostUntil} has passed before the call. A lock whose {@code lockAtMostUntil} passed while the store was
     *     asked (a {@code lockAtMostFor} shorter than the round trip) is returned already ended, as ShedLock's own
     *     providers return it, with a warning naming the job: extending it answers empty
     * @throws IllegalArgumentException if {@code lockAtMostFor} is zero (a lock that ends as it is taken), or the name
     *     is not a valid distlock key (blank, or longer than {@value RemoteLocker#MAX_KEY_BYTES} bytes in UTF-8)
     * @throws LockerClosedException if the locker is closed
     * @throws io.distlock.LockBackendException if the store cannot be reached or fails
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Objects.requireNonNull(configuration, "configuration");
        String name = configuration.getName();
        requirePositive(configuration.getLockAtMostFor(), name);
        // ShedLock's lock ends at createdAt + lockAtMostFor, as its own providers store it
        Duration lease = Duration.between(ClockProvider.now(), configuration.getLockAtMostUntil());
        if (lease.isNegative() || lease.isZero()) {
            return Optional.empty();
        }
        // A lease shorter than the store's round trip would be over when the grant arrives, and the locker refuses a
        // grant over on arrival: ask for a lease that outlives the round trip, and set it back to lockAtMostUntil
        Duration asked = lease.compareTo(SHORTEST_LEASE_ASKED) < 0 ? SHORTEST_LEASE_ASKED : lease;
        Optional<RemoteLock> lock;
        try {
            lock = locker.tryLockFor(name, asked);
        } catch (LockerClosedException e) {
            throw e;
        } catch (IllegalStateException heldByThisThread) {
            // The only other refusal tryLockFor documents: this thread holds the key already (distlock's locks are
            // not re-entrant). For ShedLock that is a lock held, so the answer is "not acquired".
            return Optional.empty();
        }
        return lock.map(held -> endingAtLockAtMostUntil(held, configuration, !asked.equals(lease)));
    }

    /**
     * The lock, set to end at ShedLock's {@code lockAtMostUntil}. A {@link LeaseModel#RENEWED_TTL} lease counts from
     * before the request already, unless a longer one was asked for; a {@link LeaseModel#SESSION} backend's fixed
     * lease is ended by the locker's timer, started at the grant, after the store's round trips, so it is moved back
     * (a local timer: no request). If {@code lockAtMostUntil} passed before the grant came, the store lock is released
     * and the lock returned all the same, already ended, as ShedLock's own providers return it; the job then runs
     * unprotected, which is logged as a warning naming it.
     */
    private SimpleLock endingAtLockAtMostUntil(RemoteLock lock, LockConfiguration configuration, boolean longerAsked) {
        if (longerAsked || locker.capabilities().leaseModel() == LeaseModel.SESSION) {
            Duration left = Duration.between(ClockProvider.now(), configuration.getLockAtMostUntil());
            if (left.isNegative() || left.isZero() || !lock.extend(left)) {
                lock.release();
                log.warn(
                        "Lock '{}' ended before the store's grant arrived (lockAtMostFor {} ms is shorter than the"
                                + " round trip): the job runs without the lock's protection; give it a lockAtMostFor"
                                + " longer than the job",
                        configuration.getName(),
                        configuration.getLockAtMostFor().toMillis());
            }
        }
        return new DistlockSimpleLock(configuration, lock);
    }

    /** {@code lockAtMostFor}, if positive. */
    static Duration requirePositive(Duration lockAtMostFor, String name) {
        if (lockAtMostFor.isZero()) {
            throw new IllegalArgumentException("lockAtMostFor of lock '" + name + "' is zero: a lock would end as it"
                    + " is taken; give the longest the job may hold it, e.g. @SchedulerLock(lockAtMostFor = \"10m\")");
        }
        return lockAtMostFor;
    }

    @Override
    public String toString() {
        return "DistlockLockProvider[" + locker + "]";
    }
}
