package io.distlock.etcd;

import static io.distlock.etcd.EtcdCalls.bytes;

import io.distlock.spi.Deadline;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the holder of a granted lock when its key is deleted behind its back (an operator's {@code etcdctl del}): a
 * watch on the key, as ZooKeeper's holder watches its node, so the lock is reported lost ({@code isHeld()} false,
 * {@code onLost} once, {@code release()} → {@code ALREADY_LOST}) within one watch event instead of at release.
 *
 * <p>The watch is created without a start revision, so etcd registers it as synced and delivers its events at once, not from its 100 ms catch-up loop for watches that start in the past. A deletion between
 * the grant and the watch's creation would then be missed, so the creation notice's revision is compared with the one
 * at which the grant saw the key: if the store moved on meanwhile, one transaction checks that the key is still ours.
 * Cost per acquisition: one watch creation, plus that check only when other writes happened in between.
 */
final class OwnKeyWatch {

    private static final Logger log = LoggerFactory.getLogger(OwnKeyWatch.class);

    private OwnKeyWatch() {}

    /** Starts watching the key of {@code lease}; the lease stops the watch when released or lost. */
    static void start(EtcdLockBackend backend, EtcdLease lease) {
        EtcdCalls calls = backend.calls();
        Watch.Watcher watcher =
                calls.watchDeletesFromNow(lease.etcdKey(), response -> onResponse(backend, lease, response), error -> {
                    // The watch ended (closed with the client, or cancelled by etcd): make sure once that the key is
                    // ours.
                    log.debug("The watch on {} ended: {}", lease.etcdKey(), error.toString());
                    check(backend, lease);
                });
        lease.watchingOwnKey(watcher);
    }

    private static void onResponse(EtcdLockBackend backend, EtcdLease lease, WatchResponse response) {
        if (response.isCreatedNotify()) {
            if (response.getHeader().getRevision() != lease.confirmedAt()) {
                check(backend, lease); // the store moved on between the grant and the watch: was it our key?
            }
            return;
        }
        for (WatchEvent event : response.getEvents()) {
            // A member behind the leader starts the watch at its own revision, and may show the deletion of an earlier
            // holder's key: only a deletion after our key's creation is ours.
            if (event.getEventType() == WatchEvent.EventType.DELETE
                    && event.getKeyValue().getModRevision() > lease.createRevision()) {
                deleted(backend, lease);
                return;
            }
        }
    }

    /** One transaction: is the key still the one we were granted (same create revision)? */
    private static void check(EtcdLockBackend backend, EtcdLease lease) {
        if (lease.isReleasing() || lease.isLost()) {
            return;
        }
        EtcdCalls calls = backend.calls();
        calls.txn(
                        "checking that lock '" + lease.key() + "' still holds its key",
                        // The read makes etcd serve the transaction linearizably: one with no operations counts as
                        // serializable and is answered by whichever member got it, perhaps one that lags behind.
                        txn -> txn.If(new Cmp(
                                        bytes(lease.etcdKey()),
                                        Cmp.Op.EQUAL,
                                        CmpTarget.createRevision(lease.createRevision())))
                                .Else(Op.get(bytes(lease.etcdKey()), GetOption.DEFAULT)),
                        Deadline.after(backend.operationTimeout(), calls.ticker()))
                .whenComplete((response, failure) -> {
                    if (failure == null && !response.isSucceeded()) {
                        deleted(backend, lease);
                    } else if (failure != null) {
                        log.debug("Could not check the key of lock '{}': {}", lease.key(), failure.toString());
                    }
                });
    }

    private static void deleted(EtcdLockBackend backend, EtcdLease lease) {
        if (lease.isReleasing()) {
            return; // our own release
        }
        lease.session().forget(lease);
        lease.lose(
                backend.calls().ticker().read(),
                "its etcd key " + lease.etcdKey() + " was deleted by someone else (not by this locker)");
    }
}
