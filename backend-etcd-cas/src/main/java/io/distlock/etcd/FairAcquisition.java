package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;
import static io.distlock.etcd.EtcdCalls.text;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import io.distlock.spi.LockRequest;
import io.etcd.jetcd.ByteSequence;
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
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link EtcdLockMode#FAIR}: etcd's {@code concurrency.Mutex}, step for step. The attempt puts its own key {@code
 * <prefix>/<name>/<lease id in hex>} with its session's lease and, in the same transaction, reads the key with the
 * lowest create revision under {@code <prefix>/<name>/}: if that is ours, the lock is ours (one round trip). Otherwise
 * it reads its predecessor (the last key created before ours) and waits for that one key's deletion ({@link
 * DeletionWatch}: no deletion is missed), so a release wakes exactly one waiter; on the deletion it looks again. A
 * waiter with at most {@link FairQueue#NEAR_HEAD} keys ahead watches the directory's deletions instead and is granted
 * by the last one's, without that look (one round trip less on the hand-over; {@link FairQueue.NearHead}).
 *
 * <p>The value of our key is the owner id, or for an election the candidate's identity ({@link FairQueue#value()}, as
 * etcd's {@code concurrency.Election} stores a proposal): a put repeated after a lost reply finds the key already
 * there ({@code Else} branch), recognises it as its own (its name is our claimed lease's, and it holds our value), and
 * goes on with its create revision (seed 001).
 */
final class FairAcquisition extends EtcdAcquisition {

    private static final Logger log = LoggerFactory.getLogger(FairAcquisition.class);

    private final String name;
    private final FairQueue queue;

    private volatile EtcdSession session;
    private volatile String myKey;
    private volatile long myRev;
    private volatile boolean putSent;

    /** An acquisition queueing in {@code queue} (for a lock, {@code <prefix>/<name>/}). */
    FairAcquisition(Shared shared, LockRequest request, FairQueue queue, Deadline deadline, boolean tryOnce) {
        super(shared, request, deadline, tryOnce);
        this.name = queue.claimName();
        this.queue = queue;
    }

    @Override
    void begin() {
        tracked(sessions.claim(name, request.ownerId(), requestDeadline())).whenComplete((s, e) -> {
            if (e != null) {
                fail(e);
                return;
            }
            session = s;
            myKey = queue.keyFor(s.hexId());
            myRev = 0;
            if (isFinished()) {
                cleanUp(); // ended while the session was being found: give the claim back
                return;
            }
            guarded(this::enqueue);
        });
    }

    private void enqueue() {
        EtcdSession s = session;
        ByteSequence key = bytes(myKey);
        Op check = queue.checkOnEnqueue(); // immutable: one for both branches and for every repeat of the send
        sendWrite(() -> {
                    putSent = true;
                    return calls.write(
                            "putting the queue key of lock '" + request.key() + "'",
                            txn -> txn.If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                    .Then(
                                            Op.put(
                                                    key,
                                                    bytes(queue.value()),
                                                    PutOption.builder()
                                                            .withLeaseId(s.id())
                                                            .build()),
                                            check)
                                    .Else(Op.get(key, GetOption.DEFAULT), check),
                            requestDeadline());
                })
                .ifPresent(put -> put.whenComplete((response, failure) -> {
                    if (failure != null) {
                        onFailure(failure);
                        return;
                    }
                    guarded(() -> enqueued(response));
                }));
    }

    private void enqueued(TxnResponse response) {
        List<KeyValue> owner;
        if (response.isSucceeded()) {
            myRev = response.getHeader().getRevision();
            owner = response.getGetResponses().get(0).getKvs();
        } else {
            KeyValue mine = response.getGetResponses().get(0).getKvs().get(0);
            if (!text(mine.getValue()).equals(queue.value())) {
                // Not ours: a key of an earlier attempt of this session that could not be deleted. Remove it, queue.
                log.debug("Removing a stale queue key {} of lock '{}'", myKey, request.key());
                long stale = mine.getCreateRevision();
                sendRead("removing a stale queue key of lock '" + request.key() + "'", txn -> txn.If(
                                        new Cmp(bytes(myKey), Cmp.Op.EQUAL, CmpTarget.createRevision(stale)))
                                .Then(Op.delete(bytes(myKey), DeleteOption.DEFAULT)))
                        .whenComplete((r, e) -> {
                            if (e != null) {
                                onFailure(e);
                            } else {
                                guarded(this::enqueue);
                            }
                        });
                return;
            }
            myRev = mine.getCreateRevision(); // our own put, whose reply was lost: seed 001's safe retry
            owner = response.getGetResponses().get(1).getKvs();
        }
        if (queue.grantedOnEnqueue(owner, myRev)) {
            grant(lease(response.getHeader().getRevision()));
        } else if (tryOnce) {
            giveUp();
        } else if (watchSessionLoss()) {
            lookForPredecessor();
        }
    }

    /**
     * From now on, until the attempt ends, the session's loss fails it: its key, its place in the queue, is gone with
     * the lease. False (and the attempt failed) if the session is lost already.
     */
    private boolean watchSessionLoss() {
        EtcdSession s = session;
        Consumer<String> onLoss = reason -> guarded(() -> {
            if (session == s) { // not an earlier session of an attempt that queued again (its key deleted by someone)
                placeLost(s, reason);
            }
        });
        if (!s.watchLoss(onLoss)) {
            placeLost(s, s.lostReason());
            return false;
        }
        result.whenComplete((lease, failure) -> s.unwatchLoss(onLoss));
        return true;
    }

    /**
     * Fails the attempt: its session (lease) expired while it waited, and its queue key with it. It does not queue
     * again at the back under a new lease (what etcd's {@code concurrency.Mutex} and Curator's users expect: etcd's
     * {@code TestMutexLockSessionExpired}); the caller decides whether to wait again.
     */
    private void placeLost(EtcdSession s, String reason) {
        // The key went with the lease; the clean-up's delete (if it still holds our owner id) is for a lease etcd has
        // not let go of yet, which lose() revokes.
        fail(new LockBackendException("The etcd session (lease " + s.hexId() + ") of lock '" + request.key()
                + "' expired while waiting, and its place in the queue was lost with it (" + reason
                + "); it was not queued again"));
    }

    private void lookForPredecessor() {
        long rev = myRev;
        String key = myKey;
        sendRead("reading the predecessor in the queue of lock '" + request.key() + "'", txn -> txn.If(
                                new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(rev)))
                        .Then(queue.lookAhead(rev)))
                .whenComplete((response, failure) -> {
                    if (failure != null) {
                        onFailure(failure);
                        return;
                    }
                    guarded(() -> {
                        if (!response.isSucceeded()) {
                            ourKeyVanished();
                            return;
                        }
                        long readAt = response.getHeader().getRevision();
                        FairQueue.Ahead ahead =
                                queue.ahead(response.getGetResponses().get(0).getKvs(), rev);
                        Runnable again = () -> guarded(this::lookForPredecessor);
                        if (ahead instanceof FairQueue.NearHead near) {
                            watchNearHead(near, key, rev, readAt, at -> guarded(() -> grant(lease(at))), again);
                        } else if (ahead instanceof FairQueue.OneKey one) {
                            watchForDeletion(one.key(), one.createRevision(), readAt, again);
                        } else if (ahead instanceof FairQueue.Count count) {
                            watchForDeletionAhead(count, readAt, deleted -> again.run());
                        } else {
                            grant(lease(readAt));
                        }
                    });
                });
    }

    /**
     * Our queue key is gone while we waited. If our session expired (asked of etcd now: the keep-alives may not have
     * told yet), the attempt fails ({@link #placeLost}); if someone deleted the key, it queues again, at the back.
     */
    private void ourKeyVanished() {
        EtcdSession old = session;
        if (old.isLost()) {
            placeLost(old, old.lostReason());
            return;
        }
        old.keepAliveNow(requestDeadline())
                .whenComplete((until, failure) -> guarded(() -> {
                    if (old.isLost()) {
                        placeLost(old, old.lostReason());
                    } else {
                        queueAgain(old);
                    }
                }));
    }

    private void queueAgain(EtcdSession old) {
        log.warn(
                "The queue key {} of lock '{}' vanished while waiting (deleted by someone else, its lease {} alive);"
                        + " queueing again",
                myKey,
                request.key(),
                old.hexId());
        old.unclaim(name, request.ownerId());
        putSent = false;
        if (!canStartOver()) {
            fail(new LockBackendException("The queue key of lock '" + request.key() + "' vanished while waiting"));
            return;
        }
        begin();
    }

    private void onFailure(Throwable failure) {
        Throwable cause = EtcdCalls.unwrap(failure);
        EtcdSession s = session;
        if (EtcdCalls.isNotFound(cause) && s != null) {
            s.lose("etcd no longer knows its lease " + s.hexId());
            if (canStartOver()) {
                s.unclaim(name, request.ownerId());
                putSent = false;
                begin();
                return;
            }
        }
        fail(cause);
    }

    private EtcdLease lease(long confirmedAt) {
        return new EtcdLease(
                request.key(),
                request.ownerId(),
                queue.value(),
                myKey,
                name,
                null,
                myRev,
                confirmedAt,
                session,
                request.lossListener(),
                calls,
                operationTimeout);
    }

    @Override
    CompletableFuture<Void> removeKey(Deadline cleanup) {
        EtcdSession s = session;
        if (s == null) {
            return CompletableFuture.completedFuture(null);
        }
        if (!putSent) {
            s.unclaim(name, request.ownerId());
            return CompletableFuture.completedFuture(null);
        }
        String key = myKey;
        return calls.txn(
                        "deleting the queue key of lock '" + request.key() + "'",
                        txn -> txn.If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.value(bytes(queue.value()))))
                                .Then(Op.delete(bytes(key), DeleteOption.DEFAULT)),
                        cleanup)
                .handle((response, failure) -> {
                    if (failure == null) {
                        s.unclaim(name, request.ownerId());
                    } else {
                        log.warn(
                                "Could not delete the queue key {} of lock '{}' now ({}); retrying in the background"
                                        + " while the locker is open (its lease's end deletes it otherwise)",
                                key,
                                request.key(),
                                failure.toString());
                        s.deleteLater(key, queue.value(), request.ownerId(), name);
                    }
                    return null;
                });
    }
}
