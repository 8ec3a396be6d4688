package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import io.distlock.toolkit.DurationText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of one key, of any {@link io.distlock.LockKind kind}: the acquisition creates an ephemeral sequential
 * node in the key's queue of its space ({@link ZkQueue}); the queue's grant rule says, from the sorted queue, whether
 * the node is granted and which node (or, for a permit, nodes) it watches until it is (no thundering herd, no polling),
 * so waiters are served in the order they arrived. A lock is in Curator's lock layout, so that it excludes Curator's
 * {@code InterProcessMutex} on the same path and is excluded by it: the node {@code <lockPath>/_c_<uuid>-lock-<seq>}
 * with the lowest sequence number owns the lock, every other node watches its predecessor. The acquisition object
 * lives on the acquiring thread only; its node is deleted on every way out but the grant.
 */
final class ZkAcquisition {

    private static final Logger log = LoggerFactory.getLogger(ZkAcquisition.class);

    /** Queue order: Curator's ({@code StandardLockInternalsDriver.standardFixForSorting}), without its substrings. */
    static final Comparator<String> BY_SEQUENCE = ZkAcquisition::compareBySequence;

    /** The first and the longest pause between looks at the queue, for a wait on the client's event thread. */
    private static final long POLL_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private static final long POLL_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final ZkCalls calls;
    private final SessionWatch sessions;
    private final Ticker ticker;
    private final Duration operationTimeout;
    private final LockRequest request;
    private final ZkQueue keyQueue;
    private final String lockPath;
    private final ZkLockDelay lockDelay;
    /** The lock-delay records among the queue path's children at the last look ({@link ZkLockDelay}). */
    private List<String> records = List.of();
    /** A ticker reading taken once our node's creation was answered: its {@code ctime} is no later. */
    private long createdAtNanos;
    /** How long an asynchronous wait must wait for a lock-delay before it looks again; 0 if not. */
    private long delayedNanos;

    private final Runnable wakeUp = this::wakeToList;
    /** The watcher of a blocking wait: one object, so that the client keeps one registration per watched node. */
    private final Watcher wakeWatcher = event -> {
        heard(event);
        wake();
    };
    /**
     * The queue as the last look saw it (sorted, ours in it), from which the next look may work out its standing
     * without a list; null when the next look must list ({@link #knownQueue}).
     */
    private List<String> known; // guarded by this
    /** The watcher of the nodes whose deletion is only noted ({@link ZkQueue.Standing#note}): it wakes nothing. */
    private final Watcher noteWatcher = this::heard;
    /** The names of the watched nodes whose deletion was heard since the last look. */
    private final List<String> deleted = new ArrayList<>(1); // guarded by this
    /** The watcher of an asynchronous wait, and the {@code onChange} it runs (see {@link #look}). */
    private Watcher changeWatcher;

    private Runnable changeTarget;
    private boolean woken; // guarded by this
    /** The pause before the next look of a wait on the client's event thread (see {@link #look}). */
    private long pollNanos = POLL_MIN_NANOS;

    /** The protection id of the node being created or held; null when we have no node (nothing to clean up). */
    private String protectionId;

    private ZkCalls.Created node;
    /** The name of {@link #node} under the lock path; null with it. */
    private String nodeName;

    ZkAcquisition(
            ZkCalls calls,
            SessionWatch sessions,
            Ticker ticker,
            Duration operationTimeout,
            LockRequest request,
            ZkQueue keyQueue,
            ZkLockDelay lockDelay) {
        this.calls = calls;
        this.lockDelay = lockDelay;
        this.sessions = sessions;
        this.ticker = ticker;
        this.operationTimeout = operationTimeout;
        this.request = request;
        this.keyQueue = keyQueue;
        this.lockPath = keyQueue.path();
    }

    /**
     * Seed 000 Listing 7 over a queue: join it, and leave again at once unless first. If the session ends during the
     * attempt (our node vanishes with it), the attempt is made again in the new session, within the operation timeout.
     */
    Optional<Lease> tryOnce() {
        Deadline deadline = Deadline.after(operationTimeout, ticker);
        Optional<Lease> lease = Optional.empty();
        try {
            while (true) {
                List<String> queue = enqueue(deadline);
                int index = queue.indexOf(ourName());
                if (index >= 0) {
                    if (!keyQueue.standing(queue, index).granted() || delayLeftNanos(queue, deadline) > 0) {
                        return Optional.empty();
                    }
                    lease = grant(deadline);
                    if (lease.isPresent()) {
                        return lease;
                    }
                }
                // our node vanished with its session: leave (nothing to delete) and try again in the new session
                log.debug("Session ended during tryLock('{}'); trying again", request.key());
                leave();
                if (deadline.hasPassed()) {
                    throw new TimeoutException();
                }
            }
        } catch (TimeoutException e) {
            throw new LockBackendException("No answer from ZooKeeper at " + sessions.connectString() + " within "
                    + DurationText.of(operationTimeout) + " (option connectTimeout) during tryLock('"
                    + request.key() + "')" + (sessions.isConnected() ? "" : ": not connected")
                    + "; nothing is left held");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted during tryLock('" + request.key() + "')", e);
        } catch (KeeperException e) {
            throw failure("tryLock", e);
        } finally {
            if (lease.isEmpty()) {
                leave();
            }
        }
    }

    /**
     * Seed 000 Listing 6 over a queue: join it once, wait for the predecessor to go, until {@code deadline}. Connection
     * trouble is ridden out; a session that ends while we wait takes our node and place with it, and fails the wait
     * with a {@link LockBackendException} saying so.
     */
    Optional<Lease> await(Deadline deadline) throws InterruptedException {
        Optional<Lease> lease = Optional.empty();
        sessions.addWakeUp(wakeUp);
        try {
            while (lease.isEmpty()) {
                try {
                    lease = step(deadline);
                } catch (KeeperException e) {
                    if (!isConnectionTrouble(e)) {
                        throw e;
                    }
                    // A wait rides out connection trouble and session expiry, as long as each call is answered
                    // within the operation timeout (see look) and the wait's deadline has not passed.
                    log.debug("Waiting for lock '{}' through a ZooKeeper connection problem: {}", request.key(), e);
                    pause(deadline, TimeUnit.SECONDS.toNanos(1));
                }
            }
            return lease;
        } catch (TimeoutException e) {
            if (!deadline.hasPassed()) {
                throw unreachable("lock");
            }
            if (!sessions.isConnected()) {
                throw new LockBackendException("Gave up waiting for lock '" + request.key() + "' at its deadline ("
                        + DurationText.of(deadline.maxWait().orElseThrow()) + ") while not connected to ZooKeeper at "
                        + sessions.connectString() + "; a queue node of ours is deleted when the connection returns"
                        + " or the session expires");
            }
            return Optional.empty();
        } catch (KeeperException e) {
            throw failure("lock", e);
        } finally {
            sessions.removeWakeUp(wakeUp);
            if (lease.isEmpty()) {
                leave();
            }
        }
    }

    /** One look at the queue: the lease once we are first; empty to look again. */
    private Optional<Lease> step(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        return look(deadline, null);
    }

    /** Whether the acquisition's node is in the queue (created and not known gone). */
    boolean queued() {
        return node != null;
    }

    /**
     * One look at the queue: the lease once the grant rule grants our node; otherwise a watch on the node (or nodes)
     * whose deletion may grant it, then, for a blocking wait ({@code onChange} null), sleep until one fires or {@code
     * deadline}; for an asynchronous one, return empty at once and let the watch run {@code onChange} (at once if a
     * watched node is already gone). Empty to look again.
     * A blocking wait on the client's own event thread (an application's watcher) sets no watch, whose event could
     * never come while that thread waits: it looks again after a pause, 10 ms doubling up to 250 ms. Each store call
     * waits at most the operation timeout ({@code connectTimeout}), also in a wait without deadline: a store that
     * cannot be reached for that long ends the look with a {@link TimeoutException} before {@code deadline}.
     */
    Optional<Lease> look(Deadline deadline, Runnable onChange)
            throws InterruptedException, TimeoutException, KeeperException {
        Deadline call = Deadline.after(operationTimeout, ticker);
        Deadline calls = deadline.remainingNanos() < call.remainingNanos() ? deadline : call;
        List<String> queue = node == null ? enqueue(calls) : knownQueue();
        if (queue == null) {
            queue = queue(calls);
        }
        int index = queue.indexOf(ourName());
        if (index < 0) {
            if (sessions.owning(node.stat().getEphemeralOwner()) == null) {
                throw placeLost();
            }
            // Deleted by someone else in our live session (an administrator): queue again, at the back.
            log.warn("Lock node {} of '{}' was deleted while waiting; queueing again", node.path(), request.key());
            forgetNode();
            return Optional.empty();
        }
        synchronized (this) {
            known = queue;
        }
        ZkQueue.Standing standing = keyQueue.standing(queue, index);
        delayedNanos = 0;
        if (standing.granted()) {
            long delayed = delayLeftNanos(queue, calls);
            if (delayed > 0) {
                // a grant that ended without a release keeps the key for its lock-delay: look again after it (or
                // when the queue changes)
                if (onChange != null) {
                    delayedNanos = delayed;
                } else {
                    pause(deadline, delayed);
                }
                return Optional.empty();
            }
            Optional<Lease> granted = grant(calls);
            if (granted.isEmpty()) {
                throw placeLost(); // our session ended just now
            }
            return granted;
        }
        if (onChange == null && ZkCalls.onClientThread()) {
            // A wait in an application's watcher, on the client's event thread: a watched node's deletion event would
            // have to come on this very thread, so look again after a pause instead (the client's other events wait
            // meanwhile, as they do behind any watcher that blocks).
            pause(deadline, pollNanos);
            pollNanos = Math.min(POLL_MAX_NANOS, 2 * pollNanos);
            return Optional.empty();
        }
        if (onChange != null) {
            if (onChange != changeTarget) {
                changeTarget = onChange;
                changeWatcher = event -> {
                    heard(event);
                    onChange.run();
                };
            }
            Watcher watcher = changeWatcher;
            note(standing, calls);
            for (String name : standing.watch()) {
                if (!this.calls.watch(ZKPaths.makePath(lockPath, name), watcher, calls)) {
                    onChange.run(); // gone already: look again
                    break;
                }
            }
            return Optional.empty();
        }
        synchronized (this) {
            woken = false;
        }
        note(standing, calls);
        for (String name : standing.watch()) {
            if (!this.calls.watch(ZKPaths.makePath(lockPath, name), wakeWatcher, calls)) {
                return Optional.empty(); // gone already: look again
            }
        }
        sleep(deadline, Long.MAX_VALUE);
        return Optional.empty();
    }

    /**
     * Watches the nodes whose deletion {@code standing} only notes, for {@link #knownQueue}; one already gone is noted
     * at once. Their deletion wakes nobody: the watched node's does.
     */
    private void note(ZkQueue.Standing standing, Deadline calls)
            throws InterruptedException, TimeoutException, KeeperException {
        for (String name : standing.note()) {
            if (!this.calls.watch(ZKPaths.makePath(lockPath, name), noteWatcher, calls)) {
                synchronized (this) {
                    deleted.add(name);
                }
            }
        }
    }

    /**
     * The queue without a list, when the only news since the last look is the deletion of nodes we watched and the
     * last look's queue less them grants our node; null to list. Nodes only ever join a queue behind ours, so nothing
     * else can stand ahead of it. A list is still needed after any other event or a change of connection state; when
     * the queue less them does not grant ours (a node further ahead may be gone unheard: of more than one node ahead,
     * only the first of two is noted, see {@link ZkQueue#standing}); and when a node ahead may have gone without a
     * release, leaving a lock-delay to honour: the last look saw a record, or a deleted node's name says its locker
     * writes them ({@link ZkQueue#DELAY_WRITER}, named so at its creation, before it could be granted). The list spared
     * would wait at the server behind the writes queued meanwhile (the leaver's next create, a candidate's re-queue
     * after a step-down).
     */
    private synchronized List<String> knownQueue() {
        List<String> queue = known;
        List<String> gone = List.copyOf(deleted);
        known = null;
        deleted.clear();
        if (queue == null
                || gone.isEmpty()
                || !records.isEmpty()
                || gone.stream().anyMatch(ZkQueue::writesDelayRecord)) {
            return null;
        }
        List<String> left = new ArrayList<>(queue);
        left.removeAll(gone);
        return keyQueue.standing(left, left.indexOf(nodeName)).granted() ? left : null;
    }

    /** Notes the deletion of a watched node, for {@link #knownQueue}; any other event makes the next look list. */
    private synchronized void heard(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.NodeDeleted && event.getPath() != null) {
            deleted.add(ZKPaths.getNodeFromPath(event.getPath()));
        } else {
            known = null;
        }
    }

    /** A change of connection state: the next look lists. */
    private void wakeToList() {
        synchronized (this) {
            known = null;
        }
        wake();
    }

    /** Joins the queue: creates our node and returns the queue, sorted, read right behind the create. */
    private List<String> enqueue(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        protectionId = ZkCalls.protectionId();
        String name = lockDelay.writesRecords() ? ZkQueue.DELAY_WRITER + keyQueue.kindName() : keyQueue.kindName();
        ZkCalls.Enqueued enqueued =
                calls.createAndList(lockPath, protectionId, name, ZkQueue.nodeData(request), deadline);
        node = enqueued.node();
        createdAtNanos = ticker.read();
        nodeName = ZKPaths.getNodeFromPath(node.path());
        List<String> children = enqueued.children();
        return children != null && children.contains(nodeName) ? queue(children, deadline) : queue(deadline);
    }

    private void forgetNode() {
        node = null;
        nodeName = null;
        protectionId = null;
    }

    private String ourName() {
        return nodeName;
    }

    /**
     * Compares two lock node names as Curator orders its queue: by what follows the last {@code lock-} in each (the
     * sequence number; the whole name if there is none), as strings. Allocates nothing: it runs for every pair the
     * queue's sort compares, at every look.
     */
    static int compareBySequence(String a, String b) {
        return ZkQueue.compareFrom(a, sequenceStart(a), b, sequenceStart(b));
    }

    private static int sequenceStart(String name) {
        int at = name.lastIndexOf(ZkCalls.LOCK_NAME);
        return at < 0 ? 0 : at + ZkCalls.LOCK_NAME.length();
    }

    /**
     * The queue, sorted. Another node of this acquisition's (same protection id, not the one we hold) is deleted
     * first: an application's client with a retry policy of its own repeats a create whose reply was lost, leaving the
     * first node behind in our session, ahead of ours, where it would block the key until the session ends.
     */
    private List<String> queue(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        return queue(calls.children(lockPath, deadline), deadline);
    }

    /** {@link #queue(Deadline)} from a list of the children already read. */
    private List<String> queue(List<String> read, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        List<String> children = new ArrayList<>(read.size());
        List<String> delayRecords = List.of();
        for (String child : read) {
            if (!ZkQueue.isDelayRecord(child)) {
                children.add(child);
            } else {
                if (delayRecords.isEmpty()) {
                    delayRecords = new ArrayList<>(1);
                }
                delayRecords.add(child);
            }
        }
        records = delayRecords;
        String ours = ourName();
        String prefix = ZkCalls.protectedPrefix(protectionId);
        for (Iterator<String> it = children.iterator(); it.hasNext(); ) {
            String child = it.next();
            if (child.startsWith(prefix) && !child.equals(ours)) {
                calls.delete(ZKPaths.makePath(lockPath, child), deadline);
                it.remove();
            }
        }
        children.sort(keyQueue.order());
        return children;
    }

    /**
     * How long the grant must still wait for the lock-delay of grants that ended without a release (see {@link
     * ZkLockDelay}); 0 if it need not.
     */
    private long delayLeftNanos(List<String> queue, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        if (records.isEmpty()) {
            return 0;
        }
        long serverNowMillis = node.stat().getCtime() + TimeUnit.NANOSECONDS.toMillis(ticker.read() - createdAtNanos);
        return lockDelay.leftNanos(lockPath, records, queue, serverNowMillis, deadline);
    }

    /** How long an asynchronous wait's last look found the grant held back by a lock-delay; 0 if it was not. */
    long delayedNanos() {
        return delayedNanos;
    }

    /**
     * Turns our first-in-queue node into a lease of the session that owns it; empty if that session is gone. With a
     * lock-delay, the grant's record is written first (if that fails, the caller leaves: our node and the record go).
     */
    private Optional<Lease> grant(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        ZkSession session = sessions.owning(node.stat().getEphemeralOwner());
        if (session == null) {
            return Optional.empty();
        }
        String record = lockDelay.writesRecords() ? lockDelay.write(lockPath, protectionId, deadline) : null;
        ZkLease lease = new ZkLease(
                request.key(),
                request.ownerId(),
                node.path(),
                node.stat().getCzxid(),
                node.stat().getVersion(),
                record,
                session,
                request.lossListener(),
                sessions);
        if (!session.adopt(lease)) {
            lease.lose(ticker.read(), "the ZooKeeper " + session + " was lost while the lock was being granted");
        }
        return Optional.of(lease);
    }

    static boolean isConnectionTrouble(KeeperException e) {
        return switch (e.code()) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED, SESSIONEXPIRED -> true;
            default -> false;
        };
    }

    /** Waits until woken (a change of connection state), at most {@code capNanos} and at most until the deadline. */
    private void pause(Deadline deadline, long capNanos) throws InterruptedException, TimeoutException {
        synchronized (this) {
            woken = false;
        }
        sleep(deadline, capNanos);
    }

    /** Sleeps until woken, or {@code capNanos} passed (then returns), or the deadline passed (then throws). */
    private void sleep(Deadline deadline, long capNanos) throws InterruptedException, TimeoutException {
        long start = System.nanoTime();
        synchronized (this) {
            while (!woken) {
                long left = deadline.remainingNanos();
                if (left <= 0) {
                    throw new TimeoutException();
                }
                long capLeft = capNanos - (System.nanoTime() - start);
                if (capLeft <= 0) {
                    return;
                }
                TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, capLeft));
            }
        }
    }

    private synchronized void wake() {
        woken = true;
        notifyAll();
    }

    /**
     * Deletes our node, if we may have one (also one whose creation was cut short: it is found by its protection id).
     * Waits for the answer up to the operation timeout, never interruptibly; if the client is not connected, or the
     * store cannot be reached, the deletion is handed to the session watch at once, which does it once the connection
     * is back (so that a call on a dead store fails within one operation timeout, not two).
     */
    void leave() {
        if (protectionId == null) {
            return;
        }
        String id = protectionId;
        ZkCalls.Created ours = node;
        forgetNode();
        if (!sessions.isConnected()) {
            // Waiting for the connection here would bound the caller by connectTimeout a second time.
            sessions.deleteLater(lockPath, id);
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            Deadline deadline = Deadline.after(operationTimeout, ticker);
            if (ours != null) {
                calls.delete(ours.path(), deadline);
            } else {
                calls.deleteProtected(lockPath, id, deadline);
            }
            if (lockDelay.writesRecords()) {
                calls.delete(ZkLockDelay.recordPath(lockPath, id), deadline); // written before a grant given up
            }
        } catch (InterruptedException e) {
            interrupted = true;
            sessions.deleteLater(lockPath, id);
        } catch (TimeoutException | KeeperException | RuntimeException e) {
            log.warn(
                    "Could not delete the queue node of '{}' now ({}); it is deleted when the connection returns or"
                            + " the session expires",
                    request.key(),
                    e.toString());
            sessions.deleteLater(lockPath, id);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The session that held our queue node ended while we waited: the node, and our place in the queue with it, are
     * gone. The wait fails rather than queue again at the back (as Curator's and etcd's waiters do); nothing is left.
     */
    private LockBackendException placeLost() {
        long session = node.stat().getEphemeralOwner();
        forgetNode();
        return new LockBackendException("The ZooKeeper session 0x" + Long.toHexString(session) + " expired while"
                + " waiting for lock '" + request.key() + "' at " + sessions.connectString() + "; the place in the"
                + " queue was lost with it (its node went with the session); call lock again to queue anew");
    }

    /** A store call of {@code operation} that got no answer within the operation timeout. */
    LockBackendException unreachable(String operation) {
        return new LockBackendException("No answer from ZooKeeper at " + sessions.connectString() + " within "
                + DurationText.of(operationTimeout) + " (option connectTimeout) during " + operation + "('"
                + request.key() + "')" + (sessions.isConnected() ? "" : ": not connected")
                + "; a queue node of ours is deleted when the connection returns or the session expires");
    }

    LockBackendException failure(String operation, KeeperException e) {
        return new LockBackendException(
                "ZooKeeper at " + sessions.connectString() + " failed during " + operation + "('" + request.key()
                        + "'): " + e.getMessage() + "; nothing is left held",
                e);
    }
}
