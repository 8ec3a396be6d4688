package io.distlock.zookeeper;

import io.distlock.LeaderElection;
import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.OwnerIds;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import org.apache.curator.utils.ZKPaths;

/**
 * The queue of one key in one {@link LockKind.Space space}: where its nodes live, how they are named and ordered, and
 * the grant rule of {@link LockRequest} in ZooKeeper's terms (whether a node is granted, and which nodes it watches
 * while it is not).
 *
 * <p>Layout under the base path, each space apart from the others on the same key:
 *
 * <ul>
 *   <li>locks: {@code <base>/<key>/_c_<uuid>-lock-<seq>}, Curator's {@code InterProcessMutex} layout;
 *   <li>read-write locks: {@code <base>/@read-write/<key>/_c_<uuid>-__READ__<seq>} and {@code ...-__WRIT__<seq>},
 *       Curator's {@code InterProcessReadWriteLock} layout;
 *   <li>semaphores: {@code <base>/@semaphore/<key>/_c_<uuid>-<N>-permits-<seq>}, each node naming its semaphore's N.
 * </ul>
 *
 * <p>{@code <key>} is {@link KeyCodec}'s encoding, which always escapes {@code '@'}: no key's lock path is one of the
 * two space directories.
 *
 * <p>A node holds the acquisition's owner id, except a lock node of an election ({@link #holdsIdentity}): that holds
 * the candidate's identity alone, as Curator's {@code LeaderSelector} holds its participant id in the same layout, so
 * that each reads the other's leader. Nothing of ours reads a node's data but inspection: our nodes are known by their
 * protection id (in the name) and their session ({@code ephemeralOwner}).
 *
 * <p>Whom a waiter watches: an exclusive node (lock, writer) its predecessor; a reader the nearest writer ahead of it
 * (readers share, so only a writer can hold it back, and the nearest is the last of them to go); a permit the N nodes
 * right ahead of it. Fewer than N nodes ahead (its grant) can only come about by the deletion of one of those N, while
 * no single one of them must go first (holders leave in any order), so one watch cannot do; a deletion wakes at most
 * the N waiters behind it, never the whole queue.
 */
final class ZkQueue {

    /** The directory of the read-write locks, under the base path. */
    static final String READ_WRITE_DIRECTORY = "@read-write";

    /** The directory of the semaphores, under the base path. */
    static final String SEMAPHORE_DIRECTORY = "@semaphore";

    /** Curator's read node name ({@code InterProcessReadWriteLock.READ_LOCK_NAME}). */
    static final String READ_NAME = "__READ__";

    /** Curator's write node name ({@code InterProcessReadWriteLock.WRITE_LOCK_NAME}). */
    static final String WRITE_NAME = "__WRIT__";

    /** A permit node's name after its N: {@code <N>-permits-<seq>}. */
    static final String PERMIT_NAME = "-permits-";

    /**
     * The name of a lock-delay record before the protection id of the grant it is for: {@code ~delay-<uuid>}, a
     * persistent child of the queue's path, written by a holder whose locker has a lock-delay right after its grant and
     * deleted with its node by a release (see {@link ZkLockDelay}). {@code ~} sorts after the digits of every sequence
     * number and the name holds none of the kinds' names, so Curator's recipes sort it last and never wait on it.
     */
    static final String DELAY_RECORD = "~delay-";

    /**
     * What the name of a queue node whose locker writes lock-delay records has before its kind's name: {@code
     * _c_<uuid>-delayed-lock-<seq>}, so that a waiter that hears of its deletion knows, without a list, that a record
     * may be left to honour (see {@link ZkAcquisition}). Curator's recipes, which order by what follows the kind's
     * name, and the permit count's parse, which reads the number before {@link #PERMIT_NAME}, read past it.
     */
    static final String DELAY_WRITER = "delayed-";

    /** Whether the queue node {@code name} belongs to a locker that writes lock-delay records ({@link #DELAY_WRITER}). */
    static boolean writesDelayRecord(String name) {
        return name.contains("-" + DELAY_WRITER);
    }

    /** Whether the child {@code name} of a queue's path is a lock-delay record, no queue node. */
    static boolean isDelayRecord(String name) {
        return name.startsWith(DELAY_RECORD);
    }

    /**
     * What one look found: granted, or the nodes (names) whose deletion may grant it, to watch; and the nodes further
     * ahead whose deletion is only to be noted, so that the watched node's deletion can grant it without a list.
     */
    record Standing(boolean granted, List<String> watch, List<String> note) {
        static final Standing GRANTED = new Standing(true, List.of(), List.of());

        static Standing waiting(List<String> watch) {
            return new Standing(false, watch, List.of());
        }
    }

    private final LockRequest request;
    private final String path;
    private final String kindName;

    private ZkQueue(LockRequest request, String path, String kindName) {
        this.request = request;
        this.path = path;
        this.kindName = kindName;
    }

    /** The parent of the nodes of {@code space} on the key whose node name is {@code encodedKey}, under {@code basePath}. */
    static String path(String basePath, LockKind.Space space, String encodedKey) {
        return switch (space) {
            case LOCK -> ZKPaths.makePath(basePath, encodedKey);
            case READ_WRITE -> ZKPaths.makePath(basePath, READ_WRITE_DIRECTORY, encodedKey);
            case SEMAPHORE -> ZKPaths.makePath(basePath, SEMAPHORE_DIRECTORY, encodedKey);
        };
    }

    /** The order of the queues of {@code space}: by sequence number, as Curator orders the lock and read-write queues. */
    static Comparator<String> order(LockKind.Space space) {
        return switch (space) {
            case LOCK -> ZkAcquisition.BY_SEQUENCE;
            case READ_WRITE -> ZkQueue::compareReadWrite;
            case SEMAPHORE -> ZkQueue::comparePermits;
        };
    }

    /**
     * How many nodes at the head of the sorted {@code queue} of {@code space} hold it, by the grant rule: the first of
     * a lock's; the first writer alone, or the readers before the first writer, of a read-write lock's; the first N of
     * a semaphore's (N as its first node names it).
     */
    static int holders(LockKind.Space space, List<String> queue) {
        if (queue.isEmpty()) {
            return 0;
        }
        return switch (space) {
            case LOCK -> 1;
            case READ_WRITE -> {
                if (!queue.get(0).contains(READ_NAME)) {
                    yield 1;
                }
                int readers = 0;
                while (readers < queue.size() && queue.get(readers).contains(READ_NAME)) {
                    readers++;
                }
                yield readers;
            }
            case SEMAPHORE -> Math.min(queue.size(), Math.max(1, permits(queue.get(0))));
        };
    }

    /**
     * Whether the lock nodes of {@code key} in {@code space} hold an identity rather than an owner id: those of an
     * election ({@link LeaderElection#KEY_PREFIX}), the lock space only, where Curator's {@code LeaderSelector} stores
     * its participant id ({@code getLeader()} reads the first node's data as the leader's id).
     */
    static boolean holdsIdentity(LockKind.Space space, String key) {
        return space == LockKind.Space.LOCK && key.startsWith(LeaderElection.KEY_PREFIX);
    }

    /**
     * What the node of {@code request} holds: its owner id; for an election's lock ({@link #holdsIdentity}) the owner
     * id's label alone, which is the candidate's identity (or, for a lock taken on the election's key by hand, its
     * locker's owner label).
     */
    static byte[] nodeData(LockRequest request) {
        String ownerId = request.ownerId();
        String data = holdsIdentity(request.kind().space(), request.key())
                ? OwnerIds.label(ownerId).orElse(ownerId)
                : ownerId;
        return data.getBytes(StandardCharsets.UTF_8);
    }

    /** The queue that {@code request} joins, under {@code basePath}. */
    static ZkQueue of(LockRequest request, String basePath) {
        String path = path(basePath, request.kind().space(), KeyCodec.encode(request.key()));
        return switch (request.kind()) {
            case LOCK -> new ZkQueue(request, path, ZkCalls.LOCK_NAME);
            case READ -> new ZkQueue(request, path, READ_NAME);
            case WRITE -> new ZkQueue(request, path, WRITE_NAME);
            case PERMIT -> new ZkQueue(request, path, request.limit() + PERMIT_NAME);
        };
    }

    /** The parent of the queue's nodes. */
    String path() {
        return path;
    }

    /** What a node of this request is named after its protected prefix, before the sequence number. */
    String kindName() {
        return kindName;
    }

    /** The queue's order ({@link #order(LockKind.Space)}). */
    Comparator<String> order() {
        return order(request.kind().space());
    }

    /**
     * Where the node at {@code index} of the sorted {@code queue} stands by the grant rule.
     *
     * @throws LockConfigurationException if a permit node ahead belongs to the semaphore with another N
     */
    Standing standing(List<String> queue, int index) {
        return switch (request.kind()) {
            // Two nodes ahead (a queue of three, as an election's: the leader, the next, this one): the first one's
            // deletion is noted too, so that the next one's can grant this one without a list (in a lock's queue the
            // first goes first; two readers ahead of a writer go in any order, and the list is needed when it is not)
            case LOCK, WRITE ->
                index == 0
                        ? Standing.GRANTED
                        : new Standing(
                                false, List.of(queue.get(index - 1)), index == 2 ? List.of(queue.get(0)) : List.of());
            case READ -> {
                for (int i = index - 1; i >= 0; i--) {
                    if (!queue.get(i).contains(READ_NAME)) { // a writer (or anything else) holds readers back
                        yield Standing.waiting(List.of(queue.get(i)));
                    }
                }
                yield Standing.GRANTED;
            }
            case PERMIT -> {
                int n = request.limit();
                for (int i = 0; i < index; i++) {
                    int theirs = permits(queue.get(i));
                    if (theirs > 0 && theirs != n) {
                        throw mismatch(theirs);
                    }
                }
                yield index < n ? Standing.GRANTED : Standing.waiting(queue.subList(index - n, index));
            }
        };
    }

    private LockConfigurationException mismatch(int theirs) {
        return request.permitsInUse(theirs);
    }

    /** The N that a permit node names; 0 if the name is not a permit node's. */
    static int permits(String name) {
        int end = name.lastIndexOf(PERMIT_NAME);
        int start = end < 0 ? -1 : name.lastIndexOf('-', end - 1) + 1;
        if (start <= 0 || start == end) {
            return 0;
        }
        try {
            return Integer.parseInt(name, start, end, 10);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Curator's read-write order ({@code InterProcessReadWriteLock}'s driver): by what follows either name. */
    static int compareReadWrite(String a, String b) {
        return compareFrom(a, readWriteSequenceStart(a), b, readWriteSequenceStart(b));
    }

    private static int readWriteSequenceStart(String name) {
        int read = name.lastIndexOf(READ_NAME);
        int write = name.lastIndexOf(WRITE_NAME);
        if (read < 0 && write < 0) {
            return 0;
        }
        return read > write ? read + READ_NAME.length() : write + WRITE_NAME.length();
    }

    static int comparePermits(String a, String b) {
        return compareFrom(a, permitSequenceStart(a), b, permitSequenceStart(b));
    }

    private static int permitSequenceStart(String name) {
        int at = name.lastIndexOf(PERMIT_NAME);
        return at < 0 ? 0 : at + PERMIT_NAME.length();
    }

    /** Compares {@code a} from {@code fromA} with {@code b} from {@code fromB} as strings, allocating nothing. */
    static int compareFrom(String a, int fromA, String b, int fromB) {
        int lengthA = a.length() - fromA;
        int lengthB = b.length() - fromB;
        for (int i = 0, n = Math.min(lengthA, lengthB); i < n; i++) {
            int d = a.charAt(fromA + i) - b.charAt(fromB + i);
            if (d != 0) {
                return d;
            }
        }
        return lengthA - lengthB;
    }
}
