package io.distlock.spring;

import java.time.Duration;
import java.util.UUID;

/** The leader initiator on {@code memory:}: each test on a named space of its own, shared by its lockers. */
class MemoryLeaderInitiatorTest extends DistlockLeaderInitiatorContract {

    private final String space = "leader-" + UUID.randomUUID();

    @Override
    String uri(Duration ttl) {
        return "memory://" + space + "?ttl=" + ttl.toSeconds() + "s";
    }
}
