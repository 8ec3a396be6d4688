package io.distlock.kit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockers;
import io.distlock.toolkit.DurationText;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad input gets a clear exception at once, naming the problem: never a hang, a silent success or a lock left
 * behind. Covers keys, durations, key sets, URIs, options and a closed locker.
 */
public interface BadInputContract extends LockerFixture {

    /** The calls that take one key, for the key checks. */
    private static List<Function<String, Executable>> keyedCalls(RemoteLocker locker, Duration wait) {
        return List.of(
                key -> () -> locker.lock(key).close(),
                key -> () -> locker.lock(key, wait).close(),
                key -> () -> locker.tryLock(key).ifPresent(RemoteLock::close),
                key -> () -> locker.lockAll(java.util.Collections.singletonList(key), wait)
                        .close(),
                key -> () -> locker.withLock(key, wait, () -> {}),
                key -> () -> locker.lockAsync(key, wait).join().close(),
                key -> () -> locker.tryLockAsync(key).join().ifPresent(RemoteLock::close));
    }

    /** A null key throws {@link NullPointerException} from every call that takes a key. */
    @Test
    default void key_null_isRejected() {
        try (RemoteLocker locker = openLocker(leaseTime())) {
            for (Function<String, Executable> call : keyedCalls(locker, maxWait())) {
                assertThrows(NullPointerException.class, call.apply(null), "null key");
            }
        }
    }

    /** A blank key throws {@link IllegalArgumentException} from every call that takes a key. */
    @Test
    default void key_blank_isRejected() {
        try (RemoteLocker locker = openLocker(leaseTime())) {
            for (String blank : List.of("", " ", "\t\n")) {
                for (Function<String, Executable> call : keyedCalls(locker, maxWait())) {
                    IllegalArgumentException e =
                            assertThrows(IllegalArgumentException.class, call.apply(blank), "blank key");
                    assertTrue(e.getMessage().toLowerCase(Locale.ROOT).contains("blank"), e.getMessage());
                }
            }
        }
    }

    /**
     * A key longer than {@link RemoteLocker#MAX_KEY_BYTES} bytes in UTF-8 (though fewer characters) is rejected; one
     * of exactly that many bytes, in multi-byte characters, is a valid key the backend must store.
     */
    @Test
    default void key_oversized_isRejected_maxSizeAccepted() throws Exception {
        String twoByte = "\u00e9"; // 2 bytes in UTF-8
        String max = TestKeys.unique("max") + "-";
        max = max + twoByte.repeat((RemoteLocker.MAX_KEY_BYTES - max.length()) / 2);
        max = max + "x".repeat(RemoteLocker.MAX_KEY_BYTES - max.getBytes(StandardCharsets.UTF_8).length);
        assertEquals(RemoteLocker.MAX_KEY_BYTES, max.getBytes(StandardCharsets.UTF_8).length);
        String oversized = max + twoByte;
        try (RemoteLocker locker = openLocker(leaseTime())) {
            for (Function<String, Executable> call : keyedCalls(locker, maxWait())) {
                IllegalArgumentException e =
                        assertThrows(IllegalArgumentException.class, call.apply(oversized), "oversized key");
                assertTrue(e.getMessage().contains(Integer.toString(RemoteLocker.MAX_KEY_BYTES)), e.getMessage());
            }
            try (RemoteLock lock = locker.lock(max, maxWait())) {
                assertEquals(max, lock.key());
                assertTrue(lock.isHeld(), "the lock on a key of " + RemoteLocker.MAX_KEY_BYTES + " bytes");
            }
        }
    }

    /** Null, zero and negative waits are rejected by every call that takes one, before anything is locked. */
    @Test
    default void duration_nullZeroNegative_isRejected() {
        String key = TestKeys.unique("duration");
        try (RemoteLocker locker = openLocker(leaseTime())) {
            List<Function<Duration, Executable>> calls = List.of(
                    d -> () -> locker.lock(key, d).close(),
                    d -> () -> locker.lockAll(List.of(key), d).close(),
                    d -> () -> locker.withLock(key, d, () -> {}),
                    d -> () -> locker.lockAsync(key, d).join().close());
            for (Function<Duration, Executable> call : calls) {
                assertThrows(NullPointerException.class, call.apply(null), "null wait");
                assertThrows(IllegalArgumentException.class, call.apply(Duration.ZERO), "zero wait");
                assertThrows(IllegalArgumentException.class, call.apply(Duration.ofMillis(-1)), "negative wait");
            }
            assertTrue(Lockers.isFree(locker, key), "the key is free after the rejected calls");
        }
        assertThrows(IllegalArgumentException.class, () -> lockerBuilder().leaseTime(Duration.ZERO), "zero ttl");
        assertThrows(
                IllegalArgumentException.class,
                () -> lockerBuilder().leaseTime(Duration.ofSeconds(-1)),
                "negative ttl");
        assertThrows(NullPointerException.class, () -> lockerBuilder().leaseTime(null), "null ttl");
    }

    /** Empty key sets, sets with a key twice, null sets and sets holding null are rejected by {@code lockAll}. */
    @Test
    default void keySet_emptyDuplicateOrNull_isRejected() {
        String key = TestKeys.unique("keyset");
        try (RemoteLocker locker = openLocker(leaseTime())) {
            assertThrows(IllegalArgumentException.class, () -> locker.lockAll(List.of(), maxWait()), "empty set");
            IllegalArgumentException duplicate = assertThrows(
                    IllegalArgumentException.class, () -> locker.lockAll(List.of(key, key), maxWait()), "a key twice");
            assertTrue(duplicate.getMessage().contains(key), duplicate.getMessage());
            assertThrows(NullPointerException.class, () -> locker.lockAll(null, maxWait()), "null set");
            Collection<String> withNull = new ArrayList<>(Arrays.asList(key, null));
            assertThrows(NullPointerException.class, () -> locker.lockAll(withNull, maxWait()), "null key in set");
            assertThrows(
                    IllegalArgumentException.class,
                    () -> locker.withLocks(List.of(), maxWait(), () -> {}),
                    "withLocks, empty set");
            assertTrue(Lockers.isFree(locker, key), "the key is free after the rejected calls");
        }
    }

    /** A malformed URI in the backend's scheme is a {@link LockConfigurationException} naming the URI. */
    @Test
    default void uri_malformed_isRejected() {
        String scheme = KitUris.scheme(lockerUri());
        for (String bad : List.of(scheme + "://[broken", scheme + "://host/a path with spaces", "://no-scheme", " ")) {
            LockConfigurationException e = assertThrows(
                    LockConfigurationException.class,
                    () -> RemoteLockers.open(bad).close(),
                    bad);
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "message for " + bad);
        }
    }

    /** An unknown scheme is rejected with a message naming it and listing the available ones, this backend's too. */
    @Test
    default void uri_unknownScheme_listsAvailableSchemes() {
        String scheme = KitUris.scheme(lockerUri());
        LockConfigurationException e =
                assertThrows(LockConfigurationException.class, () -> RemoteLockers.open("nosuchscheme://localhost/x")
                        .close());
        assertTrue(e.getMessage().contains("nosuchscheme"), e.getMessage());
        assertTrue(
                e.getMessage().contains(scheme),
                "the available schemes should include '" + scheme + "': " + e.getMessage());
    }

    /** An option no backend reads is rejected, named in the message, and leaves no locker open. */
    @Test
    default void uri_unknownOption_isRejected() {
        String uri = lockerUri() + (lockerUri().contains("?") ? "&" : "?") + "noSuchOption=1";
        LockConfigurationException e = assertThrows(
                LockConfigurationException.class, () -> RemoteLockers.open(uri).close(), uri);
        assertTrue(e.getMessage().contains("noSuchOption"), e.getMessage());
    }

    /**
     * A store that cannot be reached ({@link #unreachableUri()}) fails within the connect timeout (plus {@link
     * #expirySlack()}) with a {@link LockBackendException} that says what went wrong, when the locker is opened or at
     * the latest at its first {@code tryLock}: never a hang, never a lock granted.
     */
    @Test
    @Requires(Need.UNREACHABLE_URI)
    default void open_unreachableStore_failsWithinConnectTimeout() {
        Optional<String> unreachable = unreachableUri();
        Duration connect = TestTimeouts.scaled(Duration.ofSeconds(2));
        Duration bound = connect.plus(expirySlack());
        long start = System.nanoTime();
        LockBackendException e = assertTimeoutPreemptively(
                bound,
                () -> assertThrows(
                        LockBackendException.class,
                        () -> {
                            try (RemoteLocker locker = RemoteLockers.builder()
                                    .uri(unreachable.get())
                                    .connectTimeout(connect)
                                    .leaseTime(leaseTime())
                                    .build()) {
                                locker.tryLock(TestKeys.unique("unreachable")).ifPresent(RemoteLock::close);
                            }
                        },
                        "opening " + unreachable.get() + " and a tryLock on it"),
                () -> "opening " + unreachable.get() + " (connectTimeout " + DurationText.of(connect)
                        + ") did not fail within " + DurationText.of(bound));
        assertTrue(
                e.getMessage() != null && !e.getMessage().isBlank(),
                () -> "the failure to reach " + unreachable.get() + " has no message: " + e);
        assertTrue(System.nanoTime() - start <= bound.toNanos(), "failed only after " + DurationText.of(bound));
    }

    /** Every call on a closed locker throws {@link IllegalStateException}; closing it again is a no-op. */
    @Test
    default void lockerClosed_everyCallThrows() {
        String key = TestKeys.unique("closed");
        RemoteLocker locker = openLocker(leaseTime());
        locker.close();
        Duration wait = maxWait();
        List<Executable> calls = List.of(
                () -> locker.lock(key),
                () -> locker.lock(key, wait),
                () -> locker.tryLock(key),
                () -> locker.lockAll(List.of(key), wait),
                () -> locker.withLock(key, wait, () -> {}),
                () -> locker.withLock(key, wait, () -> 1),
                () -> locker.withLocks(List.of(key), wait, () -> {}),
                () -> locker.lockAsync(key, wait),
                () -> locker.tryLockAsync(key),
                locker::capabilities);
        for (Executable call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call, "a call on a closed locker");
            assertTrue(e.getMessage().toLowerCase(Locale.ROOT).contains("closed"), e.getMessage());
        }
        locker.close();
    }
}
