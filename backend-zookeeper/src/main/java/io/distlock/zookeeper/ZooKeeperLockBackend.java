package io.distlock.zookeeper;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.DurationText;
import java.io.Closeable;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.CloseableUtils;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks as ephemeral sequential nodes under {@code <basePath>/<encoded key>}, in the layout of Curator's {@code
 * InterProcessMutex}; read-write locks and semaphores likewise, each in a directory of its own ({@link ZkQueue}); the
 * ZooKeeper session is the lease of every kind (see {@link ZkSession}). One Curator client per backend: its
 * own, closed with it, or an application's, which closing leaves open (only this backend's listener, heartbeat and
 * threads go).
 */
final class ZooKeeperLockBackend implements LockBackend {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    private static final Capabilities CAPABILITIES = new Capabilities(true, true, true, LeaseModel.SESSION)
            .with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT)
            .with(
                    Capabilities.Operation.INSPECT,
                    Capabilities.Operation.BREAK,
                    Capabilities.Operation.WARN,
                    Capabilities.Operation.REQUEST_RELEASE,
                    Capabilities.Operation.LOCK_DELAY);

    private final CuratorFramework client;
    private final ZkCalls calls;
    private final SessionWatch sessions;
    private final ZkLocation location;
    private final Ticker ticker;
    private final Duration operationTimeout;
    /** What this backend opened and closes with it: the client it created; nothing for an application's client. */
    private final Closeable owned;
    /** The locker's lock-delay: the records of its grants, and every acquisition's look at others' (see there). */
    private final ZkLockDelay lockDelay;
    /** Runs the first steps of asynchronous acquisitions (their nodes' creation), in call order, and their timers. */
    private final ScheduledThreadPoolExecutor steps;

    ZooKeeperLockBackend(
            CuratorFramework client,
            ZkLocation location,
            Duration requestedSessionTimeout,
            Optional<Duration> tickTime,
            long startedNanos,
            Duration operationTimeout,
            Duration lockDelay,
            Ticker ticker,
            Closeable owned) {
        this.client = client;
        this.owned = owned;
        this.location = location;
        this.ticker = ticker;
        this.operationTimeout = operationTimeout;
        this.steps = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "distlock-zookeeper-async");
            t.setDaemon(true);
            return t;
        });
        steps.setRemoveOnCancelPolicy(true);
        AtomicLong requests = new AtomicLong();
        this.sessions = new SessionWatch(
                client,
                location.connectString(),
                requestedSessionTimeout.toNanos(),
                tickTime,
                startedNanos,
                ticker,
                requests);
        this.calls = new ZkCalls(client, sessions, requests);
        this.lockDelay = new ZkLockDelay(calls, lockDelay.toMillis());
        try {
            sessions.start(operationTimeout);
        } catch (RuntimeException e) {
            sessions.close();
            steps.shutdownNow();
            throw e;
        }
        preload();
    }

    /**
     * Loads and initialises the classes of the lock path now, without sending anything: in a fresh JVM the first lock
     * would otherwise pay for it (hundreds of milliseconds on a busy machine), long enough for a {@code tryLock} to
     * still hold its queue node when a later attempt looks.
     */
    private void preload() {
        KeyCodec.decode(KeyCodec.encode("preload"));
        ZkCalls.nodePrefix(ZkCalls.protectionId(), ZkCalls.LOCK_NAME);
        ZkAcquisition.compareBySequence(ZkCalls.LOCK_NAME + "0", ZkCalls.LOCK_NAME + "1");
        client.create()
                .storingStatIn(new Stat())
                .creatingParentContainersIfNeeded()
                .withMode(CreateMode.EPHEMERAL);
        client.getChildren();
        client.getData().usingWatcher((Watcher) event -> {});
        client.checkExists();
        client.delete().guaranteed();
    }

    /** The Curator client, for tests that need to reach the session (expire it, find its server). */
    CuratorFramework client() {
        return client;
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        return acquisition(request).tryOnce();
    }

    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        return acquisition(request).await(deadline);
    }

    /**
     * Native: the queue node's predecessor watch and the connection's state changes drive the acquisition, no thread
     * waits (see {@link ZkAsyncAcquisition}). The first look, which creates the node, runs on the backend's one step
     * thread (call order); the looks after it on {@code blockingExecutor}, where a grant is completed.
     */
    @Override
    public CompletableFuture<Optional<Lease>> acquireAsync(
            LockRequest request, Deadline deadline, Executor blockingExecutor) {
        return new ZkAsyncAcquisition(
                        acquisition(request),
                        sessions,
                        deadline,
                        ticker,
                        operationTimeout,
                        steps,
                        blockingExecutor,
                        this::releaseQuietly)
                .start();
    }

    private void releaseQuietly(Lease lease) {
        try {
            release(lease);
        } catch (RuntimeException e) {
            log.debug("Could not release an unwanted grant of '{}'; it goes with the session: {}", lease.key(), e);
        }
    }

    private ZkAcquisition acquisition(LockRequest request) {
        return new ZkAcquisition(
                calls,
                sessions,
                ticker,
                operationTimeout,
                request,
                ZkQueue.of(request, location.basePath()),
                lockDelay);
    }

    /** The parent of a key's lock nodes; give this path to Curator's {@code InterProcessMutex} to share the lock. */
    String lockPath(String key) {
        return ZKPaths.makePath(location.basePath(), KeyCodec.encode(key));
    }

    /**
     * The node is ours for as long as it exists in the session that created it (a session lease has nothing to
     * extend; the locker does not call this for {@link LeaseModel#SESSION}, but it is an honest check).
     */
    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        ZkLease zk = (ZkLease) lease;
        if (zk.isLost()) {
            return OptionalLong.empty();
        }
        try {
            Stat stat = calls.exists(zk.nodePath(), Deadline.after(operationTimeout, ticker));
            return stat != null && stat.getEphemeralOwner() == zk.session().id()
                    ? OptionalLong.of(zk.validUntilNanos())
                    : OptionalLong.empty();
        } catch (TimeoutException e) {
            throw new LockBackendException("No answer from ZooKeeper at " + location.connectString() + " within "
                    + DurationText.of(operationTimeout) + " checking lock '" + lease.key() + "'");
        } catch (KeeperException e) {
            throw new LockBackendException(
                    "ZooKeeper at " + location.connectString() + " failed checking lock '" + lease.key() + "': " + e,
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted checking lock '" + lease.key() + "'", e);
        }
    }

    /**
     * Deletes the lease's node; false (the locker answers {@code ALREADY_LOST}) if it was gone: deleted by someone
     * else, or its session expired (an ephemeral node goes with its session, whether or not the expiry was noticed
     * yet). A lease whose session is lost has no node left: silently nothing. A lease whose
     * validity ran out (the locker cleaning up after a suspension) is deleted without waiting. Otherwise waits for the
     * server's answer up to the operation timeout; the deletion is guaranteed (Curator retries it after a
     * reconnection), so a timeout here still ends with the node deleted or its session expired. A failure that is
     * not a connection loss ({@code SESSIONMOVED}, a refusal) hands the node to the same background deletion. A grant
     * of a locker with a lock-delay has its record deleted with the node, in one transaction (in the background: the
     * record first); one whose validity ran out, or whose session is lost, keeps its record: it ended without a
     * release, and the next acquirer waits the delay ({@link ZkLockDelay}).
     */
    @Override
    public boolean release(Lease lease) {
        ZkLease zk = (ZkLease) lease;
        zk.session().forget(zk);
        if (zk.isLost()) {
            return false;
        }
        if (zk.validUntilNanos() - ticker.read() <= 0) {
            sessions.deleteInBackground(zk.nodePath());
            return false;
        }
        try {
            Deadline deadline = Deadline.after(operationTimeout, ticker);
            return zk.delayRecord().isPresent()
                    ? calls.deleteTogether(zk.nodePath(), zk.delayRecord().get(), deadline)
                    : calls.delete(zk.nodePath(), deadline);
        } catch (TimeoutException e) {
            if (zk.isLost()) {
                return false; // the session expired meanwhile: its node is gone with it
            }
            deleteInBackground(zk);
            throw new LockBackendException("Could not confirm the release of lock '" + lease.key() + "' within "
                    + DurationText.of(operationTimeout) + ": no answer from ZooKeeper at " + location.connectString()
                    + "; its node is deleted as soon as the connection returns, or by the session's expiry");
        } catch (KeeperException e) {
            // Not a connection loss the call could repeat (SESSIONMOVED, a refusal): the node would otherwise stay for
            // the session's life, which on an application's client is unbounded.
            deleteInBackground(zk);
            throw new LockBackendException(
                    "ZooKeeper at " + location.connectString() + " failed releasing lock '" + lease.key() + "': " + e
                            + "; its node is deleted in the background (Curator's guaranteed delete), or goes with"
                            + " the session",
                    e);
        } catch (InterruptedException e) {
            deleteInBackground(zk);
            Thread.currentThread().interrupt();
            throw new LockBackendException(
                    "Interrupted releasing lock '" + lease.key() + "'; its node is deleted in the background", e);
        }
    }

    /** A release finished in the background: the record first, so that the grant never looks ended uncleanly. */
    private void deleteInBackground(ZkLease zk) {
        zk.delayRecord().ifPresent(sessions::deleteInBackground);
        sessions.deleteInBackground(zk.nodePath());
    }

    /**
     * A {@code sync}, then per space of the key one {@code getChildren} of its queue and one {@code getData} per holder
     * (see {@link ZkInspection}).
     */
    @Override
    public LockState inspect(String key) {
        return inspection().inspect(key);
    }

    /**
     * A {@code sync}, three {@code getChildren} (the base path and the two space directories), then a look-up per key
     * found: a scan of every key that has a node, held or waited for.
     */
    @Override
    public List<LockState> listHeld() {
        return inspection().listHeld();
    }

    /** Deletes the holders' nodes; each holder is told by the watch on its own node. */
    @Override
    public List<LockHolder> breakLock(String key) {
        return inspection().breakLock(key);
    }

    /**
     * A {@code sync}, the look-up of {@link #inspect}, then one {@code setData} per holder node writing its data back
     * unchanged: each holder's watch on its own node fires ({@code NodeDataChanged}) and its locker is told (see {@link
     * SessionWatch#watchOwned}). Curator's revocable holders act only on the data {@code __REVOKE__}, so they do not
     * hear it; a distlock holder hears Curator's {@code Revoker} (any change of its node's data is a request).
     */
    @Override
    public List<LockHolder> requestRelease(String key) {
        return inspection().requestRelease(key);
    }

    private ZkInspection inspection() {
        return new ZkInspection(calls, location.basePath(), location.connectString(), ticker, operationTimeout);
    }

    /**
     * Requests sent to ZooKeeper for the locks: create, getChildren, getData (the predecessor's watch), exists (the
     * watch on an owned node, a renewal's check), delete, and the background clean-ups; not the session's heartbeat.
     */
    @Override
    public OptionalLong storeRequests() {
        return OptionalLong.of(calls.requests());
    }

    @Override
    public void close() {
        steps.shutdownNow();
        sessions.close();
        CloseableUtils.closeQuietly(owned);
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + location.connectString() + location.basePath() + "]";
    }
}
