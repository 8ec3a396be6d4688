package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;
import static io.distlock.etcd.EtcdCalls.text;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.spi.LockRequest;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Where a {@link EtcdLockMode#CAS cas} read-write lock or semaphore keeps its holders, and how a read of them is judged
 * by the grant rule of {@link LockRequest}: a versioned record of the holders, changed only by compare-and-set (seed
 * 001's pattern), every holder's key attached to its session's lease so that a holder whose lease ends frees its share.
 *
 * <ul>
 *   <li>A read-write lock: the record key {@code <prefix>/%read-write/<name>}, whose mod revision is the record's
 *       version, and one key per holder under {@code <record>%holders/}: {@code read/<owner id>} or {@code
 *       write/<owner id>}. A grant compares the version read with the holders and, if unchanged, puts the record (no
 *       lease) and its own key in the same transaction. Only a grant adds a holder and every grant moves the version,
 *       so since the read the holders can only have left (a release, a lease's end): the decision stays safe. The
 *       release that leaves no holder deletes the record if its version is still the one it read with the count (see
 *       {@link EtcdLockBackend}); after a crash of the last holder the record stays until the next such release.
 *   <li>A semaphore of N permits: N slots {@code <prefix>/%semaphore/<name>%holders/<N>/<0..N-1>}; a grant creates a
 *       free slot (create revision 0, as a cas lock's key) and reads the holders back in the same transaction, which
 *       refuses another N as the fair mode does. No record: the slots are the count, so permits taken together do not
 *       make each other try again.
 *   <li>A writer that waits marks the read-write lock: {@code <record>%waits/<owner id>}, with its session's lease, put
 *       by each of its refused tries while its own key is not there ({@link #refused}) and deleted by its grant or
 *       its end without one, else by its session in the background. A reader that reads a mark is kept out, as by
 *       a writer that holds: readers that come after a waiting writer wait behind it. A reader whose read came just
 *       before the mark can still be granted; the writer then waits for it.
 * </ul>
 *
 * <p>The record key sits beside the fair mode's directory {@code .../<name>/}, as a cas lock's key beside a fair lock's;
 * {@code '%'} followed by {@code h} or {@code w} never occurs in an encoded name ({@link KeyCodec}), so no other name's
 * keys and none of the fair mode's fall under {@code <record>%holders/} or {@code <record>%waits/}.
 *
 * <p>Not fair, and what it cannot promise: a waiter watches the deletion of the holders that keep it out, and whoever's
 * transaction comes first then wins; a waiter for a permit may wait behind later comers, and a writer behind other
 * writers (but not behind a stream of readers: its mark holds them back).
 */
final class CasRecord {

    /** What follows the record key to make the directory of its holders. */
    static final String HOLDERS = "%holders";

    /** What follows a read-write lock's record key to make the directory of its waiting writers' marks. */
    static final String WAITS = "%waits";

    private final LockRequest request;
    private final String recordKey;
    private final String holdersDir;
    private final String ownKey;
    private final String marksDir;
    private final String ownMark;

    private CasRecord(LockRequest request, String recordKey) {
        this.request = request;
        this.recordKey = recordKey;
        this.holdersDir = holdersDir(recordKey);
        this.ownKey = holdersDir + request.kind().label() + "/" + KeyCodec.encode(request.ownerId());
        this.marksDir = recordKey + WAITS + "/";
        this.ownMark = marksDir + KeyCodec.encode(request.ownerId());
    }

    /**
     * The record of {@code request}'s key in its kind's space, under {@code prefix}.
     *
     * @throws IllegalArgumentException for a lock, which has a key of its own ({@link CasAcquisition})
     */
    static CasRecord of(String prefix, LockRequest request) {
        String space =
                switch (request.kind()) {
                    case READ, WRITE -> FairQueue.READ_WRITE;
                    case PERMIT -> FairQueue.SEMAPHORE;
                    case LOCK ->
                        throw new IllegalArgumentException("A cas lock has one key of its own, not a holders' record");
                };
        return new CasRecord(request, prefix + "/" + space + "/" + KeyCodec.encode(request.key()));
    }

    /** The directory of the holders of the record {@code recordKey}, ending in {@code '/'}. */
    static String holdersDir(String recordKey) {
        return recordKey + HOLDERS + "/";
    }

    /** The end of the range that holds the directory {@code d} (ending in '/'): {@code d} with its '/' as '0'. */
    static String rangeEnd(String d) {
        return d.substring(0, d.length() - 1) + (char) ('/' + 1);
    }

    /** The record key whose version a grant compares and moves; none for a semaphore (null), whose slots decide. */
    String recordKey() {
        return request.kind() == LockKind.PERMIT ? null : recordKey;
    }

    /** The key a grant puts: a reader's or writer's own key, or a permit's slot {@code slot}. */
    String holderKey(int slot) {
        return request.kind() == LockKind.PERMIT ? holdersDir + request.limit() + "/" + slot : ownKey;
    }

    /**
     * The compare of a grant: a reader's or writer's compares the record's version with the one read ({@code
     * version}, 0 for no record); a permit's, that its slot is free.
     */
    Cmp compare(long version, int slot) {
        return request.kind() == LockKind.PERMIT
                ? new Cmp(bytes(holderKey(slot)), Cmp.Op.EQUAL, CmpTarget.createRevision(0))
                : new Cmp(bytes(recordKey), Cmp.Op.EQUAL, CmpTarget.modRevision(version));
    }

    /**
     * What a grant does: a reader or writer puts the record and its own key; a permit puts its slot and reads the
     * holders back (another N among them refuses it, as {@link #judge} does).
     */
    Op[] grant(long leaseId, int slot) {
        Op holder = Op.put(
                bytes(holderKey(slot)),
                bytes(request.ownerId()),
                PutOption.builder().withLeaseId(leaseId).build());
        Op record = Op.put(bytes(recordKey), bytes(holdersDir), PutOption.DEFAULT);
        return switch (request.kind()) {
            case PERMIT -> new Op[] {holder, readRecord(), readHolders()};
            case WRITE -> new Op[] {record, holder, Op.delete(bytes(ownMark), DeleteOption.DEFAULT)};
            default -> new Op[] {record, holder};
        };
    }

    /**
     * What a refused grant does ({@code Else}): reads what the next try decides on ({@link #reads()}); a writer that
     * waits ({@code marks}) also puts its mark, with its session's lease {@code leaseId}, so that readers who come
     * after it wait behind it ({@link #judge}): a stream of readers cannot starve it. Its grant deletes the mark, as
     * does its end without one ({@link #markWithdrawal}); a writer that died leaves it until its lease ends, as a
     * waiter of the fair mode holds the readers behind it.
     *
     * <p>The mark is put only if the writer's own key is not there (a nested transaction): a repeat of a grant that
     * etcd applied is refused, and must not mark the writer that now holds. The writer reads such a repeat's answer
     * after a lost reply, but a grant sent again in a new raft term may be answered by its first send, and the repeat's
     * answer is then never read: a mark put there would stay until the locker closed, every later reader kept out.
     */
    Op[] refused(long leaseId, boolean marks) {
        Op[] reads = reads();
        if (!marks || request.kind() != LockKind.WRITE) {
            return reads;
        }
        Op[] all = new Op[reads.length + 1];
        all[0] = Op.txn(
                new Cmp[] {new Cmp(bytes(ownKey), Cmp.Op.EQUAL, CmpTarget.createRevision(0))},
                new Op[] {
                    Op.put(
                            bytes(ownMark),
                            bytes(request.ownerId()),
                            PutOption.builder().withLeaseId(leaseId).build())
                },
                new Op[0]);
        System.arraycopy(reads, 0, all, 1, reads.length);
        return all;
    }

    /** What a try decides on: the record and its holders, and for a reader the waiting writers' marks. */
    Op[] reads() {
        return request.kind() == LockKind.READ
                ? new Op[] {readRecord(), readHolders(), readAll(marksDir)}
                : new Op[] {readRecord(), readHolders()};
    }

    /** The delete of this writer's mark, if it is still ours (the wait ended without a grant). */
    Cmp markIsOurs() {
        return new Cmp(bytes(ownMark), Cmp.Op.EQUAL, CmpTarget.value(bytes(request.ownerId())));
    }

    /** This writer's mark key. */
    String ownMark() {
        return ownMark;
    }

    /** Deletes this writer's mark (with {@link #markIsOurs}). */
    Op markWithdrawal() {
        return Op.delete(bytes(ownMark), DeleteOption.DEFAULT);
    }

    /** The slot whose key is {@code key}, if it is one of this permit's (same N); else -1. */
    int slotOf(String key) {
        if (key == null || request.kind() != LockKind.PERMIT) {
            return -1;
        }
        String slots = holdersDir + request.limit() + "/";
        if (!key.startsWith(slots)) {
            return -1;
        }
        try {
            int slot = Integer.parseInt(key.substring(slots.length()));
            return slot < request.limit() ? slot : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Refuses a permit whose semaphore has a holder with another N (read with its own grant). */
    void checkPermits(List<KeyValue> holders) {
        if (request.kind() == LockKind.PERMIT) {
            for (KeyValue kv : holders) {
                int n = permitsOf(kv);
                if (n != request.limit()) {
                    throw request.permitsInUse(n);
                }
            }
        }
    }

    /** Reads the record key (its mod revision is the version). */
    Op readRecord() {
        return Op.get(bytes(recordKey), GetOption.DEFAULT);
    }

    /** Reads every holder. */
    Op readHolders() {
        return readAll(holdersDir);
    }

    /** Counts the holders of the record {@code recordKey} (a release asks whether it left the last). */
    static Op countHolders(String recordKey) {
        String d = holdersDir(recordKey);
        return Op.get(
                bytes(d),
                GetOption.builder()
                        .withRange(bytes(rangeEnd(d)))
                        .withCountOnly(true)
                        .build());
    }

    private static Op readAll(String d) {
        return Op.get(
                bytes(d), GetOption.builder().withRange(bytes(rangeEnd(d))).build());
    }

    /** What a read of the holders means for this attempt. */
    sealed interface Verdict {}

    /** Our own key is among the holders: a grant whose reply was lost (seed 001's safe retry). */
    record Own(String key, long createRevision) implements Verdict {}

    /** The rule lets us in: compare-and-set at the version read (a permit: of the free slot {@code slot}). */
    record Admitted(int slot) implements Verdict {}

    /** Kept out: wait for the deletion of one of the {@code count} keys in {@code dir} (created up to the read). */
    record KeptOut(String dir, String rangeEnd, long count) implements Verdict {}

    /**
     * Judges the holders read: exclusive (a writer) when there is none; shared (a reader, a permit) when no writer
     * holds and fewer hold than the smallest limit among ours and theirs, and for a reader, when no writer waits
     * ({@code marks}, read by {@link #reads()}; empty for the other kinds).
     *
     * @throws LockConfigurationException if a permit's semaphore is held with another N
     */
    Verdict judge(List<KeyValue> holders, List<KeyValue> marks) {
        for (KeyValue kv : holders) {
            if (text(kv.getValue()).equals(request.ownerId())) {
                return new Own(text(kv.getKey()), kv.getCreateRevision());
            }
        }
        return switch (request.kind()) {
            case WRITE ->
                holders.isEmpty() ? new Admitted(0) : new KeptOut(holdersDir, rangeEnd(holdersDir), holders.size());
            case READ -> {
                String writers = holdersDir + LockKind.WRITE.label() + "/";
                long writing = holders.stream()
                        .filter(kv -> text(kv.getKey()).startsWith(writers))
                        .count();
                if (writing > 0) {
                    yield new KeptOut(writers, rangeEnd(writers), writing);
                }
                // no writer holds; one that waits goes first: wait for its mark to go (its grant, its end)
                yield marks.isEmpty() ? new Admitted(0) : new KeptOut(marksDir, rangeEnd(marksDir), marks.size());
            }
            case PERMIT -> {
                checkPermits(holders);
                Set<String> taken =
                        holders.stream().map(kv -> text(kv.getKey())).collect(Collectors.toSet());
                List<Integer> free = IntStream.range(0, request.limit())
                        .filter(slot -> !taken.contains(holderKey(slot)))
                        .boxed()
                        .toList();
                // a free slot at random, so that waiters woken together seldom compete for the same one
                yield free.isEmpty()
                        ? new KeptOut(holdersDir, rangeEnd(holdersDir), holders.size())
                        : new Admitted(free.get(ThreadLocalRandom.current().nextInt(free.size())));
            }
            case LOCK -> throw new IllegalStateException("A cas lock has no holders' record");
        };
    }

    /** The N of a holder key {@code <dir><N>/<owner>}; a key of another shape counts as one permit (the safe side). */
    private int permitsOf(KeyValue kv) {
        String rest = text(kv.getKey()).substring(holdersDir.length());
        int slash = rest.indexOf('/');
        try {
            return Integer.parseInt(slash < 0 ? rest : rest.substring(0, slash));
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
