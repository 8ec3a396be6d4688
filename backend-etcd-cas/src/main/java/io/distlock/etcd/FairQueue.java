package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;
import static io.distlock.etcd.EtcdCalls.text;

import io.distlock.LeaderElection;
import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.OwnerIds;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import java.util.List;

/**
 * Where a {@link EtcdLockMode#FAIR fair} attempt queues, by its kind, and how it reads whether the grant rule of {@link
 * LockRequest} lets it in. Every space of a key has its own directory, ordered by create revision:
 *
 * <ul>
 *   <li>a lock: {@code <prefix>/<name>/<lease>} (etcd's {@code concurrency.Mutex} layout, unchanged);
 *   <li>a read-write lock: {@code <prefix>/%read-write/<name>/read/<lease>} and {@code .../write/<lease>};
 *   <li>a semaphore of N permits: {@code <prefix>/%semaphore/<name>/<N>/<lease>}.
 * </ul>
 *
 * <p>No lock's keys can fall in the other two directories: an encoded name never contains {@code '/'}, and its
 * {@code '%'} is always followed by {@code 2F} or {@code 25} ({@link KeyCodec}), so no lock is named {@code
 * %read-write} or {@code %semaphore}.
 *
 * <p>Who waits for what: a lock or a writer waits for nothing ahead, and watches the key just before its own; a reader
 * waits for no writer ahead, and watches the last writer before it; a permit waits for fewer than N keys ahead (the
 * smallest N among itself and them), and watches the deletions of the keys ahead, as no one key's deletion decides a
 * count. A lock, writer or reader with at most {@link #NEAR_HEAD} such keys ahead watches the directory's deletions
 * instead, and is granted by the last one's deletion without reading the queue again ({@link NearHead}).
 */
final class FairQueue {

    /** The directory segment of read-write locks, under the prefix. */
    static final String READ_WRITE = "%read-write";
    /** The directory segment of semaphores, under the prefix. */
    static final String SEMAPHORE = "%semaphore";

    private final LockRequest request;
    /** The key's name as etcd's keys hold it ({@link KeyCodec}). */
    private final String name;

    private final String dir;
    private final String keyDir;

    private FairQueue(LockRequest request, String name, String dir, String keyDir) {
        this.request = request;
        this.name = name;
        this.dir = dir;
        this.keyDir = keyDir;
    }

    /** The queue of {@code request}'s key in its kind's space, under {@code prefix}. */
    static FairQueue of(String prefix, LockRequest request) {
        String name = KeyCodec.encode(request.key());
        return switch (request.kind()) {
            case LOCK -> {
                String dir = prefix + "/" + name + "/";
                yield new FairQueue(request, name, dir, dir);
            }
            case READ, WRITE -> {
                String dir = prefix + "/" + READ_WRITE + "/" + name + "/";
                yield new FairQueue(request, name, dir, dir + request.kind().label() + "/");
            }
            case PERMIT -> {
                String dir = prefix + "/" + SEMAPHORE + "/" + name + "/";
                yield new FairQueue(request, name, dir, dir + request.limit() + "/");
            }
        };
    }

    /** The directory of every key of the space, ending in {@code '/'}. */
    String dir() {
        return dir;
    }

    /**
     * What the session claims for the attempt (a session puts one key per directory at a time): the directory its key
     * goes in, relative to the prefix' own; the lock's name for a lock, as before.
     */
    String claimName() {
        return switch (request.kind()) {
            case LOCK -> name;
            case READ, WRITE -> READ_WRITE + "/" + name + "/" + request.kind().label();
            case PERMIT -> SEMAPHORE + "/" + name + "/" + request.limit();
        };
    }

    /**
     * Whether {@code key} is an election's ({@link LeaderElection#KEY_PREFIX}): its queue is etcd's {@code
     * concurrency.Election}'s, whose keys hold the candidates' identities.
     */
    static boolean isElection(String key) {
        return key.startsWith(LeaderElection.KEY_PREFIX);
    }

    /**
     * What the attempt's key holds: its owner id; for an election, the candidate's identity alone (the owner id's
     * label), as etcd's {@code concurrency.Election} stores a proposal, so that {@code etcdctl elect -l} prints it. The
     * attempt knows its key by its name (its session's lease, claimed by it alone); the value is what a deletion of the
     * key compares, so it never deletes a key put by anyone else.
     */
    String value() {
        if (request.kind() == LockKind.LOCK && isElection(request.key())) {
            return OwnerIds.label(request.ownerId()).orElse(request.ownerId());
        }
        return request.ownerId();
    }

    /** The attempt's own key for a session's lease. */
    String keyFor(String leaseHex) {
        return keyDir + leaseHex;
    }

    /** The end of the range that holds the directory {@code d} (ending in '/'): {@code d} with its '/' as '0'. */
    private static String rangeEnd(String d) {
        return d.substring(0, d.length() - 1) + (char) ('/' + 1);
    }

    /** The directory of the keys that can hold a reader back: the writers. */
    private String writersDir() {
        return dir + LockKind.WRITE.label() + "/";
    }

    /**
     * The read sent with the put, in the same transaction (so a free key is taken in one round trip): the first key
     * created in the directory (a lock, a writer), the first writer (a reader), or every key (a permit, which also
     * checks the others' N).
     */
    Op checkOnEnqueue() {
        return switch (request.kind()) {
            case LOCK, WRITE -> Op.get(bytes(dir), first(dir, 1));
            case READ -> Op.get(bytes(writersDir()), first(writersDir(), 1));
            case PERMIT -> Op.get(bytes(dir), first(dir, 0));
        };
    }

    private static GetOption first(String d, int limit) {
        GetOption.Builder b = GetOption.builder()
                .withRange(bytes(rangeEnd(d)))
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .withKeysOnly(true);
        return (limit > 0 ? b.withLimit(limit) : b).build();
    }

    /**
     * Whether the attempt whose key has create revision {@code myRev} is granted, given what {@link #checkOnEnqueue()}
     * read (with or after the put; keys created after ours may be in it).
     *
     * @throws LockConfigurationException if a permit's semaphore is in use with another N
     */
    boolean grantedOnEnqueue(List<KeyValue> read, long myRev) {
        return switch (request.kind()) {
            case LOCK, WRITE -> !read.isEmpty() && read.get(0).getCreateRevision() == myRev;
            case READ -> read.isEmpty() || read.get(0).getCreateRevision() > myRev;
            case PERMIT -> {
                checkPermits(read);
                yield permitsAhead(read, myRev) < smallestLimit(read, myRev);
            }
        };
    }

    /** Refuses a permit whose semaphore has a holder or waiter with another N. */
    private void checkPermits(List<KeyValue> read) {
        for (KeyValue kv : read) {
            int n = permitsOf(kv);
            if (n != request.limit()) {
                throw request.permitsInUse(n);
            }
        }
    }

    private static long permitsAhead(List<KeyValue> read, long myRev) {
        return read.stream().filter(kv -> kv.getCreateRevision() < myRev).count();
    }

    /** The smallest N among ours and the permits ahead of us: no holder's N is ever exceeded. */
    private int smallestLimit(List<KeyValue> read, long myRev) {
        int limit = request.limit();
        for (KeyValue kv : read) {
            if (kv.getCreateRevision() < myRev) {
                limit = Math.min(limit, permitsOf(kv));
            }
        }
        return limit;
    }

    /** The N of a permit key {@code <dir><N>/<lease>}; a key of another shape counts as one permit (the safe side). */
    private int permitsOf(KeyValue kv) {
        String rest = text(kv.getKey()).substring(dir.length());
        int slash = rest.indexOf('/');
        try {
            return Integer.parseInt(slash < 0 ? rest : rest.substring(0, slash));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /**
     * How many keys ahead a waiter may have and still wait for them all on one watch of the directory ({@link NearHead}),
     * granted by the deletion events alone; a waiter further back waits for its predecessor only, and reads the queue
     * again when it goes. Two, as ZooKeeper's waiter watches the first node too when it stands two behind: with three
     * candidates taking turns, each one queues again two behind. More would wake more waiters with each release.
     */
    static final int NEAR_HEAD = 2;

    /**
     * The read that tells a waiter whose key has create revision {@code myRev} whether it is granted now, and if not,
     * what to wait for: the keys before ours, the last first, up to one more than {@link #NEAR_HEAD} (a lock, a writer:
     * every key; a reader: the writers), every key before ours (a permit).
     */
    Op lookAhead(long myRev) {
        String d = request.kind() == LockKind.READ ? writersDir() : dir;
        GetOption.Builder b = GetOption.builder()
                .withRange(bytes(rangeEnd(d)))
                .withMaxCreateRevision(myRev - 1)
                .withSortField(GetOption.SortTarget.CREATE)
                .withKeysOnly(true);
        if (request.kind() == LockKind.PERMIT) {
            return Op.get(bytes(d), b.withSortOrder(GetOption.SortOrder.ASCEND).build());
        }
        return Op.get(
                bytes(d),
                b.withSortOrder(GetOption.SortOrder.DESCEND)
                        .withLimit(NEAR_HEAD + 1)
                        .build());
    }

    /** What a waiter found ahead of it: granted, or the one key to wait for, or (a permit) a count to wait below. */
    sealed interface Ahead {}

    /** Nothing holds the waiter back. */
    record Granted() implements Ahead {}

    /** The waiter waits for the deletion of this key (its predecessor), then reads the queue again. */
    record OneKey(String key, long createRevision) implements Ahead {}

    /**
     * The waiter has these keys ahead of it and no other (at most {@link #NEAR_HEAD}): it is granted once they are all
     * deleted and its own key is not, which one watch of the directory {@code dir} to {@code rangeEnd} tells in order.
     */
    record NearHead(String dir, String rangeEnd, List<OneKey> keys) implements Ahead {}

    /** A permit waits until fewer than {@code count} keys are ahead of it (the range up to {@code maxCreateRevision}). */
    record Count(String dir, String rangeEnd, long maxCreateRevision, long count) implements Ahead {}

    /** Reads what {@link #lookAhead(long)} found. */
    Ahead ahead(List<KeyValue> read, long myRev) {
        if (request.kind() == LockKind.PERMIT) {
            long ahead = permitsAhead(read, myRev);
            return ahead < smallestLimit(read, myRev) ? new Granted() : new Count(dir, rangeEnd(dir), myRev - 1, ahead);
        }
        if (read.isEmpty()) {
            return new Granted();
        }
        if (read.size() <= NEAR_HEAD) {
            List<OneKey> keys = read.stream()
                    .map(kv -> new OneKey(text(kv.getKey()), kv.getCreateRevision()))
                    .toList();
            return new NearHead(dir, rangeEnd(dir), keys);
        }
        return new OneKey(text(read.get(0).getKey()), read.get(0).getCreateRevision());
    }
}
