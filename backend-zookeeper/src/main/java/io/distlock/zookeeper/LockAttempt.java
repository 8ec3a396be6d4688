package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition of one key, in Curator's lock layout so that it excludes Curator's {@code InterProcessMutex} on the
 * same path and is excluded by it: the attempt creates an ephemeral sequential node {@code
 * <lockPath>/_c_<uuid>-lock-<seq>}; the node with the lowest sequence number owns the lock; every other node watches
 * only its predecessor (no thundering herd, no polling), so waiters are served in the order they arrived. The attempt
 * object lives on the acquiring thread only; the node is ours until granted, and deleted on every other way out.
 */
final class LockAttempt {

    private static final Logger log = LoggerFactory.getLogger(LockAttempt.class);

    private static final Comparator<String> BY_SEQUENCE = Comparator.comparing(
            (String name) -> StandardLockInternalsDriver.standardFixForSorting(name, ZkCalls.LOCK_NAME));

    private final ZkCalls calls;
    private final SessionWatch sessions;
    private final Ticker ticker;
    private final Duration operationTimeout;
    private final LockRequest request;
    private final String lockPath;
    private final Runnable wakeUp = this::wake;
    private boolean woken; // guarded by this

    private String ourPath;
    private String ourName;
    private long createSentNanos;
    private Stat created;
    private Lease lease;

    LockAttempt(
            ZkCalls calls,
            SessionWatch sessions,
            Ticker ticker,
            Duration operationTimeout,
            LockRequest request,
            String lockPath) {
        this.calls = calls;
        this.sessions = sessions;
        this.ticker = ticker;
        this.operationTimeout = operationTimeout;
        this.request = request;
        this.lockPath = lockPath;
    }

    /** Seed 000 Listing 7 over a queue: enqueue, and leave again at once unless first. */
    Optional<Lease> tryOnce() {
        Deadline deadline = Deadline.after(operationTimeout, ticker);
        boolean granted = false;
        try {
            enqueue(deadline);
            List<String> queue = queue(deadline);
            int index = queue.indexOf(ourName);
            if (index < 0) {
                throw new LockBackendException("The lock node " + ourPath + " of '" + request.key()
                        + "' vanished right after it was created: the ZooKeeper session at "
                        + sessions.connectString() + " ended");
            }
            if (index > 0) {
                return Optional.empty();
            }
            Optional<Lease> lease = grant();
            if (lease.isEmpty()) {
                throw new LockBackendException("The ZooKeeper session at " + sessions.connectString()
                        + " ended during tryLock('" + request.key() + "'); nothing is left held");
            }
            granted = true;
            return lease;
        } catch (TimeoutException e) {
            throw noAnswer("tryLock", operationTimeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted during tryLock('" + request.key() + "')", e);
        } catch (KeeperException e) {
            throw failure("tryLock", e);
        } finally {
            if (!granted) {
                leave();
            }
        }
    }

    /** Seed 000 Listing 6 over a queue: enqueue once, wait for the predecessor to go, until {@code deadline}. */
    Optional<Lease> await(Deadline deadline) throws InterruptedException {
        boolean granted = false;
        sessions.addWakeUp(wakeUp);
        try {
            while (true) {
                try {
                    if (step(deadline)) {
                        granted = true;
                        return Optional.of(lease);
                    }
                } catch (KeeperException e) {
                    if (!deadline.isBounded() || !isConnectionTrouble(e)) {
                        throw e;
                    }
                    // A bounded wait rides out a disconnection until its deadline.
                    log.debug("Waiting for lock '{}' through a ZooKeeper connection problem: {}", request.key(), e);
                    pause(deadline);
                }
            }
        } catch (TimeoutException e) {
            if (!sessions.isConnected()) {
                throw new LockBackendException("Gave up waiting for lock '" + request.key() + "' at its deadline ("
                        + deadline.maxWait().orElseThrow() + ") while not connected to ZooKeeper at "
                        + sessions.connectString() + "; our queue node is deleted when the connection returns or"
                        + " the session expires");
            }
            return Optional.empty();
        } catch (KeeperException e) {
            throw failure("lock", e);
        } finally {
            sessions.removeWakeUp(wakeUp);
            if (!granted) {
                leave();
            }
        }
    }

    /** One look at the queue: true once we are first and granted ({@link #lease} set); false to look again. */
    private boolean step(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        if (ourPath == null) {
            enqueue(deadline);
        }
        List<String> queue = queue(deadline);
        int index = queue.indexOf(ourName);
        if (index < 0) {
            // The session that held our node ended (or someone deleted it): queue again, at the back.
            log.warn(
                    "Lock node {} of '{}' vanished while waiting (ZooKeeper session ended?); queueing again",
                    ourPath,
                    request.key());
            ourPath = null;
            return false;
        }
        if (index == 0) {
            Optional<Lease> granted = grant();
            if (granted.isPresent()) {
                lease = granted.get();
                return true;
            }
            ourPath = null; // our session ended just now: queue again
            return false;
        }
        String predecessor = ZKPaths.makePath(lockPath, queue.get(index - 1));
        synchronized (this) {
            woken = false;
        }
        Watcher watcher = event -> wake();
        if (ZkCalls.ok(ZkCalls.await(calls.watchData(predecessor, watcher), deadline))) {
            sleep(deadline, Long.MAX_VALUE);
        }
        return false;
    }

    private static boolean isConnectionTrouble(KeeperException e) {
        return switch (e.code()) {
            case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED, SESSIONEXPIRED -> true;
            default -> false;
        };
    }

    /** Waits for a change of connection state, at most a second and at most until the deadline. */
    private void pause(Deadline deadline) throws InterruptedException, TimeoutException {
        synchronized (this) {
            woken = false;
        }
        sleep(deadline, TimeUnit.SECONDS.toNanos(1));
    }

    private void enqueue(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        Stat stat = new Stat();
        long sent = ticker.read();
        CompletableFuture<CuratorEvent> create =
                calls.createLockNode(lockPath, request.ownerId().getBytes(StandardCharsets.UTF_8), stat);
        CuratorEvent event;
        try {
            event = ZkCalls.await(create, deadline);
        } catch (TimeoutException | InterruptedException e) {
            // The node may still be created after we stop waiting: delete it then.
            create.thenAccept(late -> {
                if (late.getResultCode() == KeeperException.Code.OK.intValue()) {
                    calls.delete(late.getName());
                }
            });
            throw e;
        }
        if (!ZkCalls.ok(event)) {
            throw KeeperException.create(KeeperException.Code.NONODE, lockPath);
        }
        ourPath = event.getName();
        ourName = ZKPaths.getNodeFromPath(ourPath);
        createSentNanos = sent;
        Stat fromEvent = event.getStat();
        created = fromEvent != null && fromEvent.getCzxid() != 0 ? fromEvent : stat;
        if (created.getCzxid() == 0) {
            // Found again by its protection id after a lost reply: the stat did not come with it.
            CuratorEvent exists = ZkCalls.await(calls.exists(ourPath), deadline);
            if (!ZkCalls.ok(exists) || exists.getStat() == null) {
                throw KeeperException.create(KeeperException.Code.NONODE, ourPath);
            }
            created = exists.getStat();
        }
    }

    private List<String> queue(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        CuratorEvent event = ZkCalls.await(calls.children(lockPath), deadline);
        if (!ZkCalls.ok(event)) {
            return List.of();
        }
        List<String> children = new ArrayList<>(event.getChildren());
        children.sort(BY_SEQUENCE);
        return children;
    }

    /** Turns our first-in-queue node into a lease of the session that owns it; empty if that session is gone. */
    private Optional<Lease> grant() {
        ZkSession session = sessions.owning(created.getEphemeralOwner());
        if (session == null) {
            return Optional.empty();
        }
        ZkLease lease = new ZkLease(
                request.key(),
                request.ownerId(),
                ourPath,
                created.getCzxid(),
                session,
                createSentNanos,
                request.lossListener());
        if (!session.adopt(lease)) {
            lease.lose(ticker.read(), "the ZooKeeper " + session + " was lost while the lock was being granted");
        }
        return Optional.of(lease);
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

    /** Deletes our node if we have one: waits for the answer up to the operation timeout, never interruptibly. */
    private void leave() {
        if (ourPath == null) {
            return;
        }
        String path = ourPath;
        ourPath = null;
        boolean interrupted = Thread.interrupted();
        try {
            ZkCalls.ok(ZkCalls.await(calls.delete(path), Deadline.after(operationTimeout, ticker)));
        } catch (InterruptedException e) {
            interrupted = true;
        } catch (TimeoutException | KeeperException | RuntimeException e) {
            log.warn(
                    "Could not confirm the deletion of lock node {} of '{}' ({}); it is deleted when the connection"
                            + " returns or the session expires",
                    path,
                    request.key(),
                    e.toString());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private LockBackendException noAnswer(String operation, Duration waited) {
        return new LockBackendException("No answer from ZooKeeper at " + sessions.connectString() + " within "
                + waited + " during " + operation + "('" + request.key() + "')"
                + (sessions.isConnected() ? "" : ": not connected") + "; nothing is left held");
    }

    private LockBackendException failure(String operation, KeeperException e) {
        return new LockBackendException(
                "ZooKeeper at " + sessions.connectString() + " failed during " + operation + "('" + request.key()
                        + "'): " + e.getMessage() + "; nothing is left held",
                e);
    }
}
