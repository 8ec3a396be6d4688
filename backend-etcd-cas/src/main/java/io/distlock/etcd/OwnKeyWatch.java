package io.distlock.etcd;

import io.distlock.spi.Deadline;
import io.etcd.jetcd.Watch;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the holder of a granted lock when its key is deleted behind its back (an operator's {@code etcdctl del}): a
 * {@link DeletionWatch} on the key, as ZooKeeper's holder watches its node, so the lock is reported lost ({@code
 * isHeld()} false, {@code onLost} once, {@code release()} → {@code ALREADY_LOST}) within a moment after the grant
 * and one round trip instead of at release.
 *
 * <p>The watch is created by {@link EtcdLease#onStillHeld}, which the locker calls in its deferred pass at most 200 ms
 * after the grant, for a lock still held then; not at once: most locks are held for less than that, and a watch per
 * acquisition (a gRPC stream opened and closed, in the client and in etcd) made an uncontended acquire + release about
 * 12% slower. A deletion before the watch starts is not missed: the watch's creation notice comes at a later revision
 * than the grant's, and {@link DeletionWatch} then checks the key once.
 *
 * <p>The watch also sees the puts on the key, which are release requests ({@link EtcdInspection#requestRelease}: the
 * key put again with its value and lease), and gives each the key's version ({@link EtcdLease#keyVersionSeen}), as the
 * check does: a request made before the watch started is found by the check's read, within the same 200 ms.
 */
final class OwnKeyWatch {

    private static final Logger log = LoggerFactory.getLogger(OwnKeyWatch.class);

    private OwnKeyWatch() {}

    /** Starts watching the key of {@code lease}, unless it is released or lost; the lease stops it when it is. */
    static void start(EtcdCalls calls, Duration operationTimeout, EtcdLease lease) {
        if (lease.isReleasing() || lease.isLost()) {
            return;
        }
        Watch.Watcher watcher = DeletionWatch.start(
                calls,
                lease.etcdKey(),
                lease.createRevision(),
                lease.confirmedAt(),
                () -> Deadline.after(operationTimeout, calls.ticker()),
                () -> deleted(calls, lease),
                lease::keyVersionSeen,
                error -> {
                    // The watch ended (closed with the client, or cancelled by etcd), or its check failed: make sure
                    // once that the key is ours.
                    log.debug("The watch on {} ended: {}", lease.etcdKey(), error.toString());
                    check(calls, operationTimeout, lease);
                });
        lease.watchingOwnKey(watcher::close);
    }

    /** One transaction: is the key still the one we were granted (same create revision)? */
    private static void check(EtcdCalls calls, Duration operationTimeout, EtcdLease lease) {
        if (lease.isReleasing() || lease.isLost()) {
            return;
        }
        DeletionWatch.versionIfStillThere(
                        calls,
                        lease.etcdKey(),
                        lease.createRevision(),
                        Deadline.after(operationTimeout, calls.ticker()))
                .whenComplete((version, failure) -> {
                    if (failure != null) {
                        log.debug("Could not check the key of lock '{}': {}", lease.key(), failure.toString());
                    } else if (version.isEmpty()) {
                        deleted(calls, lease);
                    } else {
                        lease.keyVersionSeen(version.getAsLong());
                    }
                });
    }

    private static void deleted(EtcdCalls calls, EtcdLease lease) {
        if (lease.isReleasing()) {
            return; // our own release
        }
        lease.session().forget(lease);
        lease.lose(
                calls.ticker().read(),
                "its etcd key " + lease.etcdKey() + " was deleted by someone else (not by this locker)");
    }
}
