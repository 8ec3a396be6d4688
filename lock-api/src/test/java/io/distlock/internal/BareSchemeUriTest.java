package io.distlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** A URI of a scheme alone keeps its options: {@code memory:?ttl=5s} is {@code memory:/?ttl=5s}, not opaque. */
class BareSchemeUriTest {

    @Test
    void parse_bareSchemeWithQuery_keepsTheQuery() {
        assertEquals("ttl=5s", LockerFactory.parse("memory:?ttl=5s").getRawQuery());
        assertEquals("memory", LockerFactory.parse("memory:").getScheme());
    }

    @Test
    void open_bareSchemeWithUnknownOption_isRejected() {
        LockConfigurationException e =
                assertThrows(LockConfigurationException.class, () -> RemoteLockers.open("memory:?noSuchOption=1")
                        .close());
        assertTrue(e.getMessage().contains("noSuchOption"), e.getMessage());
    }

    @Test
    void open_bareSchemeWithTtl_usesIt() {
        try (RemoteLocker locker = RemoteLockers.open("memory:?ttl=5m");
                RemoteLock lock = locker.tryLock("bare-scheme-ttl").orElseThrow()) {
            Duration left = Duration.between(Instant.now(), lock.validUntil());
            assertTrue(left.compareTo(Duration.ofMinutes(4)) > 0, "lease left " + left + ", want about 5 minutes");
        }
    }

    @Test
    void open_memoryUriWithAPathAfterTheSpaceName_isRejected() {
        for (String uri : new String[] {"memory://a/b", "memory:///a/b"}) {
            LockConfigurationException e = assertThrows(
                    LockConfigurationException.class,
                    () -> RemoteLockers.open(uri).close(),
                    uri);
            assertTrue(e.getMessage().contains("Malformed memory URI"), e.getMessage());
        }
        RemoteLockers.open("memory://a/").close();
    }
}
