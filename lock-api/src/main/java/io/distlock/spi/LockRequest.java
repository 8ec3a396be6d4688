package io.distlock.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One request for a lock, as the locker hands it to a backend: key and owner id are already checked.
 *
 * @param key the key; non-blank, at most {@link io.distlock.RemoteLocker#MAX_KEY_BYTES} bytes in UTF-8
 * @param ownerId the owner id of this acquisition, unique per acquisition; the value to store and compare on release
 * @param leaseTime the lease time to grant and to renew by
 * @param lossListener whom to tell if the backend learns by itself that the lease is gone (a session expired, a
 *     keep-alive failed); may be called from any thread, more than once
 */
public record LockRequest(String key, String ownerId, Duration leaseTime, LeaseLossListener lossListener) {

    /** Checks that every part is given. */
    public LockRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(lossListener, "lossListener");
    }
}
