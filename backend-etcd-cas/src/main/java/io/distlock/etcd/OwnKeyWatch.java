package io.distlock.etcd;

import io.distlock.spi.Deadline;
import io.etcd.jetcd.Watch;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the holder of a granted lock when its key is deleted behind its back (an operator's {@code etcdctl del}): a
 * {@link DeletionWatch} on the key, as ZooKeeper's holder watches its node, so the lock is reported lost ({@code
 * isHeld()} false, {@code onLost} once, {@code release()} → {@code ALREADY_LOST}) within {@link #WATCH_AFTER} and one
 * round trip instead of at release.
 *
 * <p>The watch is created {@link #WATCH_AFTER} after the grant, not at once: most locks are held for less than that,
 * and a watch per acquisition (a gRPC stream opened and closed, in the client and in etcd) made an uncontended acquire
 * + release about 12% slower. A deletion before the watch starts is not missed: the watch's creation notice comes at a
 * later revision than the grant's, and {@link DeletionWatch} then checks the key once.
 */
final class OwnKeyWatch {

    private static final Logger log = LoggerFactory.getLogger(OwnKeyWatch.class);

    /** How long a lock is held before its key is watched: a deletion out of band is noticed that much later. */
    static final Duration WATCH_AFTER = Duration.ofMillis(100);

    private OwnKeyWatch() {}

    /** Starts watching the key of {@code lease} after {@link #WATCH_AFTER}; the lease stops it when released or lost. */
    static void start(EtcdLockBackend backend, EtcdLease lease) {
        ScheduledFuture<?> pending = backend.calls()
                .timer()
                .schedule(() -> watch(backend, lease), WATCH_AFTER.toNanos(), TimeUnit.NANOSECONDS);
        lease.watchingOwnKey(() -> pending.cancel(false));
    }

    private static void watch(EtcdLockBackend backend, EtcdLease lease) {
        if (lease.isReleasing() || lease.isLost()) {
            return;
        }
        EtcdCalls calls = backend.calls();
        Watch.Watcher watcher = DeletionWatch.start(
                calls,
                lease.etcdKey(),
                lease.createRevision(),
                lease.confirmedAt(),
                () -> Deadline.after(backend.operationTimeout(), calls.ticker()),
                () -> deleted(backend, lease),
                error -> {
                    // The watch ended (closed with the client, or cancelled by etcd), or its check failed: make sure
                    // once that the key is ours.
                    log.debug("The watch on {} ended: {}", lease.etcdKey(), error.toString());
                    check(backend, lease);
                });
        lease.watchingOwnKey(watcher::close);
    }

    /** One transaction: is the key still the one we were granted (same create revision)? */
    private static void check(EtcdLockBackend backend, EtcdLease lease) {
        if (lease.isReleasing() || lease.isLost()) {
            return;
        }
        EtcdCalls calls = backend.calls();
        DeletionWatch.isStillThere(
                        calls,
                        lease.etcdKey(),
                        lease.createRevision(),
                        Deadline.after(backend.operationTimeout(), calls.ticker()))
                .whenComplete((there, failure) -> {
                    if (failure != null) {
                        log.debug("Could not check the key of lock '{}': {}", lease.key(), failure.toString());
                    } else if (!there) {
                        deleted(backend, lease);
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
