package io.distlock;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Who leads an election, as the store keeps it ({@link LeaderElection#leader()}): read from the election's lock entry,
 * not from any candidate's own view, so it answers for every process.
 *
 * @param identity the identity the leader joined with ({@link LeaderElection#join}); the owner label of whatever holds
 *     the election's lock key when something other than a candidate took it
 * @param epoch the term's epoch: the lock's fencing token, which grows strictly with every new leader, where the
 *     backend gives one ({@link Capabilities#fencing()}); empty where it does not (Redis)
 * @param since when the store created the leader's entry, where it keeps that time (see {@link LockHolder#since()})
 */
public record Leader(String identity, OptionalLong epoch, Optional<Instant> since) {

    /** Checks that every part is given. */
    public Leader {
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(epoch, "epoch");
        Objects.requireNonNull(since, "since");
    }
}
