package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;

import io.distlock.LockKind;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link EtcdLockMode#CAS}: a reader, a writer or a permit, granted by a compare-and-set of its key's holders ({@link
 * CasRecord}), one etcd transaction per try:
 *
 * <pre>
 * If(modRevision(record) == version read) Then put(record), put(own key, ownerId, lease) Else get(record), get(holders)
 * If(createRevision(free slot) == 0) Then put(slot, ownerId, lease), get(holders) Else get(record), get(holders)
 * </pre>
 *
 * <p>The first try compares with no record (nobody holds) or slot 0, so a free key is taken in one round trip. The
 * {@code Else} branch is the read the next try decides on, and it finds our own key after a lost reply (seed 001, as
 * {@link CasAcquisition}). A waiter watches the deletion of the holders that keep it out: a freed slot is tried at
 * once; a reader or writer reads the record again, as a deletion leaves the version as it was and the version alone
 * must not decide. Not fair: every waiter is woken, and the first transaction wins.
 */
final class CasRecordAcquisition extends EtcdAcquisition {

    private static final Logger log = LoggerFactory.getLogger(CasRecordAcquisition.class);

    /** The version of a record that does not exist: no holder. */
    private static final long NO_RECORD = 0;

    private final CasRecord record;
    private volatile EtcdSession session;
    /** The holder key a put of ours may have put (sent, and not answered without it); null: none. */
    private volatile String triedKey;

    /** An acquisition of {@code request}'s kind on its key, through {@code record}. */
    CasRecordAcquisition(Shared shared, LockRequest request, CasRecord record, Deadline deadline, boolean tryOnce) {
        super(shared, request, deadline, tryOnce);
        this.record = record;
    }

    @Override
    void begin() {
        EtcdSession s = session;
        if (s != null && s.isUsable()) {
            guarded(() -> compareAndSet(NO_RECORD, 0));
            return;
        }
        tracked(sessions.any(requestDeadline())).whenComplete((found, e) -> {
            if (e != null) {
                fail(e);
                return;
            }
            session = found;
            guarded(() -> compareAndSet(NO_RECORD, 0));
        });
    }

    /** Whether this acquisition's refused tries mark the lock: a writer that waits ({@link CasRecord#refused}). */
    private boolean marks() {
        return request.kind() == LockKind.WRITE && !tryOnce;
    }

    private String what() {
        return request.kind().label() + " '" + request.key() + "'";
    }

    private void compareAndSet(long version, int slot) {
        EtcdSession s = session;
        String key = record.holderKey(slot);
        sendWrite(() -> {
                    triedKey = key;
                    return calls.write(
                            "compare-and-set of the holders of " + what(),
                            txn -> txn.If(record.compare(version, slot))
                                    .Then(record.grant(s.id(), slot))
                                    .Else(record.refused(s.id(), marks())),
                            requestDeadline());
                })
                .ifPresent(write -> whenAnswered(s, write, this::answered));
    }

    private void answered(TxnResponse response) {
        long revision = response.getHeader().getRevision();
        if (response.isSucceeded()) {
            if (!response.getGetResponses().isEmpty()) {
                record.checkPermits(response.getGetResponses().get(1).getKvs()); // a permit read the holders back
            }
            grant(lease(triedKey, revision, revision));
            return;
        }
        decide(response.getGetResponses(), revision);
    }

    /** Decides on a read of the record and its holders at store revision {@code readAt}. */
    private void decide(List<GetResponse> read, long readAt) {
        long version = read.get(0).getKvs().isEmpty()
                ? NO_RECORD
                : read.get(0).getKvs().get(0).getModRevision();
        CasRecord.Verdict verdict =
                record.judge(read.get(1).getKvs(), read.size() > 2 ? read.get(2).getKvs() : List.of());
        if (verdict instanceof CasRecord.Own own) {
            // our own lost reply; the refused repeat put no mark, our key being there (CasRecord#refused)
            grant(lease(own.key(), own.createRevision(), readAt));
            return;
        }
        triedKey = null;
        if (verdict instanceof CasRecord.Admitted admitted) {
            compareAndSet(version, admitted.slot());
            return;
        }
        if (tryOnce) {
            giveUp();
            return;
        }
        CasRecord.KeptOut out = (CasRecord.KeptOut) verdict;
        watchForDeletionAhead(
                new FairQueue.Count(out.dir(), out.rangeEnd(), readAt, out.count()),
                readAt,
                deleted -> guarded(() -> {
                    // A permit's slot freed: try that slot at once (its Else reads the holders should another win it)
                    int slot = record.slotOf(deleted);
                    if (slot >= 0) {
                        compareAndSet(NO_RECORD, slot);
                    } else {
                        readAgain();
                    }
                }));
    }

    private void readAgain() {
        sendRead("reading the holders of " + what(), txn -> txn.Then(record.reads()))
                .whenComplete((response, failure) -> {
                    if (failure != null) {
                        fail(failure);
                        return;
                    }
                    guarded(() -> decide(
                            response.getGetResponses(), response.getHeader().getRevision()));
                });
    }

    private EtcdLease lease(String holderKey, long createRevision, long confirmedAt) {
        return new EtcdLease(
                request.key(),
                request.ownerId(),
                request.ownerId(),
                holderKey,
                null,
                record.recordKey(),
                createRevision,
                confirmedAt,
                session,
                request.lossListener(),
                calls,
                operationTimeout);
    }

    @Override
    CompletableFuture<Void> removeKey(Deadline cleanup) {
        EtcdSession s = session;
        String key = triedKey;
        CompletableFuture<Void> mark =
                s != null && marks() ? withdrawMark(s, cleanup) : CompletableFuture.completedFuture(null);
        if (key == null || s == null) {
            return mark;
        }
        return calls.txn(
                        "deleting the holder key of an abandoned attempt on " + what(),
                        txn -> txn.If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.value(bytes(request.ownerId()))))
                                .Then(Op.delete(bytes(key), DeleteOption.DEFAULT)),
                        cleanup)
                .handle((response, failure) -> {
                    if (failure != null) {
                        log.warn(
                                "Could not delete the holder key {} of an abandoned attempt on {} now ({}); retrying in"
                                        + " the background while the locker is open (its lease's end deletes it"
                                        + " otherwise)",
                                key,
                                what(),
                                failure.toString());
                        s.deleteLater(key, request.ownerId(), request.ownerId(), null);
                    }
                    return null;
                })
                .thenCombine(mark, (removed, withdrawn) -> null);
    }

    /**
     * Deletes this writer's mark if it is still ours, so that the readers it holds back need not wait for its session's
     * lease, which lives as long as the locker: after a wait that ended without a grant. A delete that fails is handed
     * to session {@code s}, which repeats it with its keep-alives.
     */
    private CompletableFuture<Void> withdrawMark(EtcdSession s, Deadline deadline) {
        return calls.txn(
                        "deleting the writer's mark on " + what(),
                        txn -> txn.If(record.markIsOurs()).Then(record.markWithdrawal()),
                        deadline)
                .handle((response, failure) -> {
                    if (failure != null) {
                        log.debug(
                                "Could not delete the writer's mark on {} now ({}); retrying in the background",
                                what(),
                                failure.toString());
                        s.deleteLater(record.ownMark(), request.ownerId(), request.ownerId(), null);
                    }
                    return null;
                });
    }
}
