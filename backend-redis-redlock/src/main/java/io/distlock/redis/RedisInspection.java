package io.distlock.redis;

import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Who holds a key, read from the masters themselves ({@code holders.lua}), and breaking it: what {@link
 * RedisLockBackend#inspect}, {@link RedisLockBackend#listHeld} and {@link RedisLockBackend#breakLock} do.
 *
 * <p>Every master is read; a holder counts when as many masters hold it as its grant needs (a majority, or a permit's
 * quorum: {@link Redlock#quorum(LockKind, long)}), so an attempt caught half-way or a minority left behind is not shown.
 * Its lease ends when the last of those masters would drop it, unless renewed: the quorum-th latest end. Redis keeps
 * no time of the grant and no queue (waiters poll), and the backend gives no fencing token, so those stay empty.
 */
final class RedisInspection {

    private static final String READ = "read";
    private static final String BREAK = "break";
    private static final String REQUEST = "request";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Redlock redlock;
    private final RedlockSettings settings;
    private final Clock clock;
    private final Duration timeout;

    RedisInspection(Redlock redlock, RedlockSettings settings, Clock clock) {
        this.redlock = redlock;
        this.settings = settings;
        this.clock = clock;
        this.timeout = settings.connectTimeout();
    }

    /** The holders of {@code key} on a quorum of the masters, as {@code holders.lua} reads them on each. */
    LockState inspect(String key) {
        return state(key, join(run(key, READ)));
    }

    /**
     * Every key held under the prefix: {@code SCAN} of the prefix on every master, then {@link #inspect} of each key
     * found, the scripts sent together. Keys on too few masters to be held are left out.
     */
    List<LockState> listHeld() {
        List<CompletableFuture<List<byte[]>>> scans = new ArrayList<>();
        for (Master m : redlock.masters()) {
            scans.add(m.scan(timeout, settings.keyPrefix()));
        }
        TreeSet<String> keys = new TreeSet<>();
        for (List<byte[]> names : answers(scans, "list the keys under '" + settings.keyPrefix() + "'")) {
            for (byte[] name : names) {
                keyOf(name).ifPresent(keys::add);
            }
        }
        Map<String, CompletableFuture<List<List<Object>>>> reads = new LinkedHashMap<>();
        keys.forEach(key -> reads.put(key, run(key, READ)));
        List<LockState> held = new ArrayList<>();
        reads.forEach((key, read) -> {
            LockState state = state(key, join(read));
            if (state.held()) {
                held.add(state);
            }
        });
        return held;
    }

    /**
     * Deletes the entries of {@code key}'s holders on every master (its lock key and its sets, as {@code redis-cli
     * DEL} would) and announces their release, so that waiters try at once; the holders learn at their next renewal.
     *
     * @return the holders deleted from a quorum of the masters
     */
    List<LockHolder> breakLock(String key) {
        return state(key, join(run(key, BREAK))).holders();
    }

    /**
     * Asks {@code key}'s holders to let go: {@code holders.lua} adds a request of a new random id to each holder's
     * field in the key's release requests ({@link RedlockSettings#requestsKey}), on every master that holds it; each
     * holder's renewal reads it (a third of the lease at most) and its lease tells the locker once ({@link
     * RedisLease#heard}). A free key gets nothing.
     *
     * @return the holders asked on a quorum of the masters
     */
    List<LockHolder> requestRelease(String key) {
        byte[] id = new byte[REQUEST_ID_BYTES];
        RANDOM.nextBytes(id);
        return state(key, join(run(key, REQUEST, HexFormat.of().formatHex(id)))).holders();
    }

    /** A release request's id: 8 random bytes, 16 hex digits; unique enough among a holder's requests. */
    private static final int REQUEST_ID_BYTES = 8;

    private CompletableFuture<List<List<Object>>> run(String key, String operation) {
        return run(key, operation, "");
    }

    /** {@code holders.lua} on every master; completes with the answers once a majority answered and all are in. */
    private CompletableFuture<List<List<Object>>> run(String key, String operation, String requestId) {
        List<byte[]> keys = List.of(
                settings.redisKey(key).getBytes(StandardCharsets.UTF_8),
                settings.spaceKey(key, LockKind.Space.READ_WRITE),
                settings.spaceKey(key, LockKind.Space.SEMAPHORE),
                settings.requestsKey(key));
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
        for (Master m : redlock.masters()) {
            replies.add(m.query(timeout, LuaScript.HOLDERS, keys, operation, settings.releaseChannel(), requestId));
        }
        String what = (operation.equals(BREAK) ? "break" : operation.equals(REQUEST) ? "ask the holders of" : "inspect")
                + " '" + key + "'";
        return CompletableFuture.allOf(
                        replies.stream().map(r -> r.exceptionally(e -> null)).toArray(CompletableFuture[]::new))
                .thenApply(all -> answers(replies, what));
    }

    /**
     * The answers of the masters that answered; at least a majority must have, or nobody could tell who holds.
     *
     * @throws LockBackendException naming the masters that did not answer
     */
    private <T> List<T> answers(List<CompletableFuture<T>> replies, String what) {
        List<T> answered = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            try {
                answered.add(replies.get(i).join());
            } catch (CompletionException e) {
                failed.add(redlock.masters().get(i) + " (" + why(e) + ")");
            }
        }
        if (answered.size() < redlock.majority()) {
            throw new LockBackendException("Could not " + what + ": too few Redis masters answered for a majority of "
                    + redlock.majority() + " of " + replies.size() + " (unanswered: " + String.join(", ", failed)
                    + ")" + (what.startsWith("break") ? "; some entries may be deleted" : "")
                    + (what.startsWith("ask") ? "; the masters that answered were asked" : ""));
        }
        return answered;
    }

    /** Why a master did not answer: a refusal in a user's words (an ACL user lacking inspection's commands), else the error. */
    private String why(Throwable e) {
        return RedisFailures.describe(e, settings.keyPrefix(), false)
                .map(refused -> refused.startsWith("permission denied")
                        ? refused + "; inspection needs TYPE, PTTL and ZRANGEBYSCORE besides, the listing SCAN,"
                                + " and a release request HGET and HSET"
                        : refused)
                .orElseGet(() -> String.valueOf(Master.unwrap(e)));
    }

    /** The result of {@code future}, or the {@link LockBackendException} it failed with. */
    private static <T> T join(CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            if (Master.unwrap(e) instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** One holder's entry on one master: what it stores, its kind (and a permit's N), the milliseconds it has left. */
    private record Entry(LockKind kind, long limit, String value) {}

    private LockState state(String key, List<List<Object>> replies) {
        Instant now = clock.instant();
        Map<Entry, List<Long>> left = new LinkedHashMap<>();
        for (List<Object> reply : replies) {
            List<?> lock = (List<?>) reply.get(0);
            if (!lock.isEmpty()) {
                add(left, new Entry(LockKind.LOCK, 1, (String) lock.get(0)), (Long) lock.get(1));
            }
            shares(left, (List<?>) reply.get(1), false);
            shares(left, (List<?>) reply.get(2), true);
        }
        List<LockHolder> holders = new ArrayList<>();
        left.forEach((entry, ms) -> {
            int quorum = redlock.quorum(entry.kind(), entry.limit());
            if (ms.size() >= quorum) {
                ms.sort(Comparator.reverseOrder());
                long until = ms.get(quorum - 1);
                holders.add(LockHolder.of(
                        entry.kind(),
                        Redlock.ownerIdOf(entry.value()),
                        Optional.empty(),
                        until >= 0 ? Optional.of(now.plusMillis(until)) : Optional.empty(), // no ttl: another tool's
                        OptionalLong.empty()));
            }
        });
        return new LockState(key, holders, OptionalInt.empty());
    }

    private static void add(Map<Entry, List<Long>> left, Entry entry, long ms) {
        left.computeIfAbsent(entry, e -> new ArrayList<>()).add(ms);
    }

    /** The holders of a set, {@code <tag>:<value>} then the milliseconds left (see {@code shared.lua}). */
    private static void shares(Map<Entry, List<Long>> left, List<?> entries, boolean semaphore) {
        for (int i = 0; i + 1 < entries.size(); i += 2) {
            String holder = (String) entries.get(i);
            int colon = holder.indexOf(':');
            String tag = colon < 0 ? "" : holder.substring(0, colon);
            String value = holder.substring(colon + 1);
            Entry entry;
            if (semaphore) {
                entry = new Entry(LockKind.PERMIT, permits(tag), value);
            } else {
                entry = new Entry(tag.equals("w") ? LockKind.WRITE : LockKind.READ, 1, value);
            }
            add(left, entry, (Long) entries.get(i + 1));
        }
    }

    /** A permit's N from its tag; a tag that is no number (not ours) counts as one permit. */
    private static long permits(String tag) {
        try {
            return Math.max(1, Long.parseLong(tag));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /**
     * The application key whose lock key, read-write set or semaphore set is {@code name} ({@link
     * RedlockSettings#redisKey}, {@link RedlockSettings#spaceKey}); empty for a name of another shape.
     */
    private Optional<String> keyOf(byte[] name) {
        byte[] prefix = settings.keyPrefix().getBytes(StandardCharsets.UTF_8);
        if (name.length <= prefix.length || !Arrays.equals(name, 0, prefix.length, prefix, 0, prefix.length)) {
            return Optional.empty();
        }
        int end = name.length;
        int mark = indexOf(name, prefix.length, (byte) 0xFF);
        if (mark >= 0) {
            if (!endsIn(name, mark, LockKind.Space.READ_WRITE, prefix.length)
                    && !endsIn(name, mark, LockKind.Space.SEMAPHORE, prefix.length)) {
                return Optional.empty();
            }
            end = mark;
        }
        return end > prefix.length
                ? Optional.of(new String(name, prefix.length, end - prefix.length, StandardCharsets.UTF_8))
                : Optional.empty();
    }

    /** Whether {@code name} ends, from {@code mark} on, in the suffix of {@code space}'s set. */
    private boolean endsIn(byte[] name, int mark, LockKind.Space space, int prefixLength) {
        byte[] bare = settings.spaceKey("", space); // the prefix, then the suffix
        return Arrays.equals(name, mark, name.length, bare, prefixLength, bare.length);
    }

    private static int indexOf(byte[] bytes, int from, byte b) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
