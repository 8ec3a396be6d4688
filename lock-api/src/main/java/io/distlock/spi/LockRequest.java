package io.distlock.spi;

import io.distlock.LockKind;
import java.time.Duration;
import java.util.Objects;

/**
 * One request for a grant, as the locker hands it to a backend: key and owner id are already checked.
 *
 * <p>A backend keeps the request's {@link LockKind#space() space} apart from the others on the same key, and grants by
 * one rule in every space: an exclusive request ({@link #exclusive()}) when nothing is ahead of it on the key, a shared
 * one when no exclusive grant or waiter is ahead of it and fewer than {@link #limit()} shared ones are (fewer than the
 * smallest limit among itself and them, so that no holder's limit is ever exceeded). A fair backend serves the key's
 * waiters in arrival order by that rule, so no waiter (a writer behind a stream of readers) is overtaken.
 *
 * @param key the key; non-blank, at most {@link io.distlock.RemoteLocker#MAX_KEY_BYTES} bytes in UTF-8
 * @param ownerId the owner id of this acquisition, unique per acquisition; the value to store and compare on release
 * @param leaseTime the lease time to grant and to renew by
 * @param lossListener whom to tell if the backend learns by itself that the lease is gone (a session expired, a
 *     keep-alive failed); may be called from any thread, more than once
 * @param kind what is asked for; {@link LockKind#LOCK} for a lock
 * @param limit how many shared grants of the space may be held at once: 1 for an exclusive kind, {@link
 *     #UNBOUNDED} for {@link LockKind#READ}, the semaphore's permits (at least 1) for {@link LockKind#PERMIT}
 */
public record LockRequest(
        String key, String ownerId, Duration leaseTime, LeaseLossListener lossListener, LockKind kind, int limit) {

    /** The limit of the read side: as many readers as come. */
    public static final int UNBOUNDED = Integer.MAX_VALUE;

    /** Checks that every part is given and that the limit suits the kind. */
    public LockRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(lossListener, "lossListener");
        Objects.requireNonNull(kind, "kind");
        int expected = kind.exclusive() ? 1 : kind == LockKind.READ ? UNBOUNDED : limit;
        if (limit < 1 || limit != expected) {
            throw new IllegalArgumentException("A " + kind.label() + " request takes limit "
                    + (kind == LockKind.PERMIT ? "of at least 1" : expected == UNBOUNDED ? "UNBOUNDED" : "1")
                    + ", not " + limit);
        }
    }

    /** A request for the exclusive lock on {@code key}. */
    public LockRequest(String key, String ownerId, Duration leaseTime, LeaseLossListener lossListener) {
        this(key, ownerId, leaseTime, lossListener, LockKind.LOCK, 1);
    }

    /**
     * The refusal of this permit request, whose semaphore the store holds or queues with {@code inUseWith} permits
     * instead of {@link #limit()}: the one wording of every backend.
     */
    public io.distlock.LockConfigurationException permitsInUse(long inUseWith) {
        return new io.distlock.LockConfigurationException("Semaphore '" + key + "' is in use with " + inUseWith
                + " permits; this call asks for it with " + limit
                + ": every user of a semaphore must give the same number of permits");
    }

    /** Whether the grant excludes every other grant in its space on the key ({@link LockKind#exclusive()}). */
    public boolean exclusive() {
        return kind.exclusive();
    }
}
