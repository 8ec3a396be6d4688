package io.distlock.cassandra;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.RemoteLocker;
import io.distlock.spi.LockRequest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * How the read-write locks and the semaphores live in the lock's tables without touching a lock's rows: the partition
 * of a key in each space, and the kind (and N) that each queue ticket and owner cell carries there.
 *
 * <p>A lock's partition is its key, as it always was. A read-write lock's or a semaphore's partition is {@code rw#} or
 * {@code semaphore#}, the key's length in UTF-8 bytes, {@code #}, the key, then {@code ~} up to more than {@link
 * RemoteLocker#MAX_KEY_BYTES} bytes: longer than any key may be, so no lock's partition is ever one of them, and the
 * length says where the key ends, so two keys never share one.
 *
 * <p>In those partitions an <em>entry</em> (the part of a ticket after its 20 digits of time, and an owner cell's
 * value) is the owner id, {@code |} and a tag: {@code W} for a writer, {@code R} for a reader, {@code P} and N for a
 * permit of a semaphore of N permits ({@code ...|P3}). The tag comes last so that tickets of equal time are ordered by
 * owner id, as a lock's are, never by kind. A lock's entry is its bare owner id, as it always was.
 */
final class SharedEntries {

    /**
     * The most shared grants one key holds at once here: a claimer reads at most this many owner cells plus one, and
     * the whole row (so a writer's cell is never missed) only while the row holds no more.
     */
    static final int MAX_SHARED = 1000;

    private SharedEntries() {}

    /** The partition of {@code key} in the space of {@code kind}. */
    static String partition(LockKind kind, String key) {
        if (kind.space() == LockKind.Space.LOCK) {
            return key;
        }
        String head = (kind.space() == LockKind.Space.READ_WRITE ? "rw#" : "semaphore#")
                + key.getBytes(StandardCharsets.UTF_8).length + "#" + key;
        int bytes = head.getBytes(StandardCharsets.UTF_8).length;
        return bytes > RemoteLocker.MAX_KEY_BYTES ? head : head + "~".repeat(RemoteLocker.MAX_KEY_BYTES + 1 - bytes);
    }

    /**
     * The key whose partition (in any space) is {@code partition}: the inverse of {@link #partition}. A partition
     * longer than any key is a read-write lock's or a semaphore's; its length field says where the key ends.
     */
    static String keyOf(String partition) {
        byte[] bytes = partition.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= RemoteLocker.MAX_KEY_BYTES) {
            return partition;
        }
        String prefix = partition.startsWith("rw#") ? "rw#" : "semaphore#";
        int lengthEnd = partition.indexOf('#', prefix.length());
        int length = Integer.parseInt(partition.substring(prefix.length(), lengthEnd));
        int from = partition.substring(0, lengthEnd + 1).getBytes(StandardCharsets.UTF_8).length;
        return new String(Arrays.copyOfRange(bytes, from, from + length), StandardCharsets.UTF_8);
    }

    /** The kind of the grant whose entry (an owner cell's value) is {@code entry} in {@code space}. */
    static LockKind kindOf(LockKind.Space space, String entry) {
        if (space == LockKind.Space.LOCK) {
            return LockKind.LOCK;
        }
        return switch (tag(entry).charAt(0)) {
            case 'W' -> LockKind.WRITE;
            case 'R' -> LockKind.READ;
            default -> LockKind.PERMIT;
        };
    }

    /**
     * The owner id in {@code entry} of {@code space}: the entry itself for a lock, else the entry without its tag (an
     * owner id never holds a {@code |}: its label is %-encoded).
     */
    static String ownerIdOf(LockKind.Space space, String entry) {
        return space == LockKind.Space.LOCK ? entry : entry.substring(0, entry.lastIndexOf('|'));
    }

    /** The entry a request writes: its owner id, tagged with its kind outside the lock's space. */
    static String entry(LockRequest request) {
        return switch (request.kind()) {
            case LOCK -> request.ownerId();
            case WRITE -> request.ownerId() + "|W";
            case READ -> request.ownerId() + "|R";
            case PERMIT -> request.ownerId() + "|P" + request.limit();
        };
    }

    /** Whether an entry of a shared space is exclusive (a writer). */
    static boolean exclusive(String entry) {
        return entry.endsWith("|W");
    }

    /** The tag of a shared space's entry: what follows its last {@code |}. */
    private static String tag(String entry) {
        return entry.substring(entry.lastIndexOf('|') + 1);
    }

    /** The limit of a shared entry: N for a permit, {@link LockRequest#UNBOUNDED} for a reader, 1 for a writer. */
    static int limit(String entry) {
        String tag = tag(entry);
        return switch (tag.charAt(0)) {
            case 'P' -> Integer.parseInt(tag.substring(1));
            case 'R' -> LockRequest.UNBOUNDED;
            default -> 1;
        };
    }

    /** How many shared grants a request may be one of: its limit, at most {@link #MAX_SHARED}. */
    static int bound(LockRequest request) {
        return request.exclusive() ? 1 : Math.min(request.limit(), MAX_SHARED);
    }

    /**
     * The generalized grant rule over the entries ahead of a request (holders and waiters, in ticket order): an
     * exclusive request when none is; a shared one when none of them is exclusive and fewer than the smallest limit
     * among itself and them are.
     */
    static boolean grantable(LockRequest request, List<String> ahead) {
        if (request.exclusive()) {
            return ahead.isEmpty();
        }
        int smallest = bound(request);
        for (String entry : ahead) {
            if (exclusive(entry)) {
                return false;
            }
            smallest = Math.min(smallest, limit(entry));
        }
        return ahead.size() < smallest;
    }

    /**
     * Whether the owner row {@code owners} (the values read, ours among them or not) lets {@code request} hold beside
     * them: an exclusive one alone, a shared one beside no writer and with no more cells than the smallest limit among
     * itself and them.
     */
    static boolean admits(LockRequest request, String ours, List<String> owners) {
        List<String> others = owners.stream().filter(o -> !o.equals(ours)).toList();
        if (request.exclusive()) {
            return others.isEmpty();
        }
        return grantable(request, others);
    }

    /**
     * Refuses a permit request when an entry of {@code entries} is a permit of another N: nothing is written yet.
     *
     * @throws LockConfigurationException naming both numbers
     */
    static void checkLimit(LockRequest request, List<String> entries) {
        if (request.kind() != LockKind.PERMIT) {
            return;
        }
        for (String entry : entries) {
            if (tag(entry).startsWith("P") && limit(entry) != request.limit()) {
                throw request.permitsInUse(limit(entry));
            }
        }
    }
}
