package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;
import static io.distlock.etcd.EtcdCalls.text;

import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link EtcdLockMode#CAS}: seed 001's {@code CAS_versioned} with version 0 meaning "must not exist", as one etcd
 * transaction on the lock's single key {@code <prefix>/<name>}:
 *
 * <pre>
 * If(createRevision(key) == 0) Then put(key, ownerId, lease) Else get(key)
 * </pre>
 *
 * <p>The {@code Else} branch is what makes the retry after a lost reply safe <em>and</em> correct: the seed says a
 * versioned CAS may be sent again until a real answer comes, and indeed the repeat cannot overwrite anybody; but a
 * repeat of a put that was applied fails its compare, and without reading the key back the caller would take its own
 * lock for somebody else's and leave it behind. Reading the key in the same transaction and finding our owner id in
 * it tells us the first put was ours. A waiter waits for the deletion of the key it read ({@link DeletionWatch}) and
 * tries again then (every waiter is woken; not fair).
 */
final class CasAcquisition extends EtcdAcquisition {

    private static final Logger log = LoggerFactory.getLogger(CasAcquisition.class);

    private final String key;
    private volatile EtcdSession session;
    /** Whether a put of ours may have been applied (sent, and not answered "held by another"). */
    private volatile boolean mayHoldKey;

    /** An acquisition of the lock's one key {@code key}, {@code <prefix>/<name>}. */
    CasAcquisition(Shared shared, LockRequest request, String key, Deadline deadline, boolean tryOnce) {
        super(shared, request, deadline, tryOnce);
        this.key = key;
    }

    @Override
    void begin() {
        EtcdSession s = session;
        if (s != null && s.isUsable()) {
            guarded(this::compareAndSet);
            return;
        }
        tracked(sessions.any(requestDeadline())).whenComplete((found, e) -> {
            if (e != null) {
                fail(e);
                return;
            }
            session = found;
            guarded(this::compareAndSet);
        });
    }

    private void compareAndSet() {
        EtcdSession s = session;
        sendWrite(() -> {
                    mayHoldKey = true;
                    return calls.write(
                            "compare-and-set of lock '" + request.key() + "'",
                            txn -> txn.If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                    .Then(Op.put(
                                            bytes(key),
                                            bytes(request.ownerId()),
                                            PutOption.builder()
                                                    .withLeaseId(s.id())
                                                    .build()))
                                    .Else(Op.get(bytes(key), GetOption.DEFAULT)),
                            requestDeadline());
                })
                .ifPresent(write -> whenAnswered(s, write, this::answered));
    }

    private void answered(TxnResponse response) {
        if (response.isSucceeded()) {
            grant(lease(response.getHeader().getRevision(), response.getHeader().getRevision()));
            return;
        }
        List<KeyValue> current = response.getGetResponses().get(0).getKvs();
        if (!current.isEmpty() && text(current.get(0).getValue()).equals(request.ownerId())) {
            grant(lease(current.get(0).getCreateRevision(), response.getHeader().getRevision())); // our own lost reply
            return;
        }
        mayHoldKey = false;
        if (tryOnce) {
            giveUp();
            return;
        }
        if (current.isEmpty()) {
            begin(); // deleted between compare and read cannot happen in one txn; be safe and look again
            return;
        }
        watchForDeletion(
                key,
                current.get(0).getCreateRevision(),
                response.getHeader().getRevision(),
                () -> guarded(this::begin));
    }

    private EtcdLease lease(long createRevision, long confirmedAt) {
        return new EtcdLease(
                request.key(),
                request.ownerId(),
                request.ownerId(),
                key,
                null,
                null,
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
        if (!mayHoldKey || s == null) {
            return CompletableFuture.completedFuture(null);
        }
        return calls.txn(
                        "deleting the key of an abandoned attempt on lock '" + request.key() + "'",
                        txn -> txn.If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.value(bytes(request.ownerId()))))
                                .Then(Op.delete(bytes(key), DeleteOption.DEFAULT)),
                        cleanup)
                .handle((response, failure) -> {
                    if (failure != null) {
                        log.warn(
                                "Could not delete the key {} of an abandoned attempt on '{}' now ({}); retrying in the"
                                        + " background while the locker is open (its lease's end deletes it otherwise)",
                                key,
                                request.key(),
                                failure.toString());
                        s.deleteLater(key, request.ownerId(), request.ownerId(), null);
                    }
                    return null;
                });
    }
}
