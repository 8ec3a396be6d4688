package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.spi.Deadline;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.ZooKeeperThread;

/**
 * The few ZooKeeper operations the lock needs, each bounded by a {@link Deadline}.
 *
 * <p>Calls are synchronous (the answer wakes the caller straight from ZooKeeper's I/O thread, as with Curator's own
 * recipes), and made only while connected: while the connection is down a call waits for it to come back, until its
 * deadline, instead of queueing. The client runs without Curator's retries ({@code RetryNTimes(0)}); a call that loses
 * its connection is repeated here after the reconnection. A call already on the wire when the connection silently
 * dies can outlive its deadline until the client notices (at most two thirds of the session timeout).
 *
 * <p>Queue nodes are named as Curator's protected mode names them, {@code _c_<uuid>-lock-<sequence>} for a lock (other
 * kinds: {@link ZkQueue}), with the UUID
 * chosen here, so that the "created, but the reply was lost" case is recognised: after a lost reply the node is looked
 * for by its UUID before creating another, and a node left by an abandoned attempt is found and deleted the same way.
 */
final class ZkCalls {

    /** Curator's lock node name ({@code InterProcessMutex}'s {@code LOCK_NAME}); the sequence number follows it. */
    static final String LOCK_NAME = "lock-";

    /** Curator's protected-mode prefix ({@code ProtectedUtils.PROTECTED_PREFIX}). */
    static final String PROTECTED_PREFIX = "_c_";

    private final CuratorFramework client;
    private final SessionWatch sessions;
    /**
     * Requests sent to the server (each try of a repeated call counted; parents created on first use are not), shared
     * with the {@link SessionWatch}, which counts the watch on each owned node and the clean-ups it sends.
     */
    private final AtomicLong requests;

    ZkCalls(CuratorFramework client, SessionWatch sessions, AtomicLong requests) {
        this.client = client;
        this.sessions = sessions;
        this.requests = requests;
    }

    /** Requests sent to the server so far, for {@link ZooKeeperLockBackend#storeRequests()}. */
    long requests() {
        return requests.get();
    }

    /** A fresh protection id. Only uniqueness matters (it is no secret), so a fast generator will do. */
    static String protectionId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long high = (random.nextLong() & ~0xF000L) | 0x4000L; // version 4
        long low = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L; // IETF variant
        return new UUID(high, low).toString();
    }

    /** The node name prefix of an attempt with {@code protectionId}: every node of the attempt starts with it. */
    static String protectedPrefix(String protectionId) {
        return PROTECTED_PREFIX + protectionId + "-";
    }

    /**
     * The node name of an attempt with {@code protectionId}, before the sequence number: {@code kindName} is {@link
     * #LOCK_NAME} for a lock (see {@link ZkQueue#kindName()}).
     */
    static String nodePrefix(String protectionId, String kindName) {
        return protectedPrefix(protectionId) + kindName;
    }

    /** A created lock node. */
    record Created(String path, Stat stat) {}

    /** A created lock node, and the queue as read right behind its creation (null if it was not read so). */
    record Enqueued(Created node, List<String> children) {}

    /**
     * Whether this is one of the ZooKeeper client's own threads, such as the event thread that runs an application's
     * watchers and background callbacks: no answer or event delivered by that thread comes while it waits.
     */
    static boolean onClientThread() {
        return Thread.currentThread() instanceof ZooKeeperThread;
    }

    /**
     * Creates the lock node as {@link #createLockNode} does and lists the queue, in one round trip: the create is sent
     * without waiting for its answer and the children are read right behind it. ZooKeeper answers a session's requests
     * in order, so the list holds the new node. (Curator's recipe waits for the create's answer before it reads: a
     * round trip more, and one more wake-up of the calling thread and of the client's I/O thread, per acquisition.)
     * The create's answer, with the node's stat (its fencing token and session), comes on ZooKeeper's event thread.
     *
     * <p>Anything unusual falls back to a create that waits for its answer: a key whose parent nodes do not exist yet
     * (the pipelined create does not create parents), an answer lost with the connection (the node is looked for by
     * its protection id first), and a lock taken on one of ZooKeeper's own threads (an application's watcher). A create
     * given up in flight (the deadline passed, the thread was interrupted, the list failed) is deleted when its answer
     * comes, should the server have made it after the caller's clean-up looked.
     *
     * @return the node, and the children read right behind its create; null children if the create fell back. The
     *     list may lack the node (an application client's retry policy repeated the create, or sent it only after a
     *     reconnection): the caller then reads the queue again
     */
    Enqueued createAndList(String lockPath, String protectionId, String kindName, byte[] data, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        if (onClientThread()) {
            // An application's watcher taking a lock on ZooKeeper's event thread: the create's answer would have to
            // come on this very thread. Wait for it as a plain call instead.
            return new Enqueued(createLockNode(lockPath, protectionId, kindName, data, deadline, false), null);
        }
        awaitConnected(deadline);
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            requests.incrementAndGet();
            client.create()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .inBackground((c, event) -> answer.complete(event))
                    .forPath(ZKPaths.makePath(lockPath, nodePrefix(protectionId, kindName)), data);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw unexpected(e);
        }
        boolean settled = false;
        try {
            List<String> children = children(lockPath, deadline);
            CuratorEvent created = answer.get(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            settled = true;
            KeeperException.Code code = KeeperException.Code.get(created.getResultCode());
            return switch (code) {
                case OK -> new Enqueued(new Created(created.getName(), created.getStat()), children);
                // the key's parent nodes are missing (its first lock, or its container was reaped)
                case NONODE ->
                    new Enqueued(createLockNode(lockPath, protectionId, kindName, data, deadline, false), null);
                // the server may have created it
                case CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED ->
                    new Enqueued(createLockNode(lockPath, protectionId, kindName, data, deadline, true), null);
                default -> throw KeeperException.create(code, created.getPath());
            };
        } catch (ExecutionException e) {
            throw unexpected(e); // never: the future is only ever completed with a value
        } finally {
            if (!settled) {
                answer.thenAccept(created -> {
                    if (created.getResultCode() == KeeperException.Code.OK.intValue()) {
                        sessions.deleteInBackground(created.getName());
                    }
                });
            }
        }
    }

    /**
     * Creates the ephemeral sequential node {@code lockPath/_c_<protectionId>-<kindName><seq>} and waits for the answer,
     * creating missing parents as container nodes (which the server deletes once empty).
     *
     * @param mayExistAtFirst whether an earlier create of this protection id may have been made (its answer lost): the
     *     node is then looked for before it is created
     */
    private Created createLockNode(
            String lockPath,
            String protectionId,
            String kindName,
            byte[] data,
            Deadline deadline,
            boolean mayExistAtFirst)
            throws InterruptedException, TimeoutException, KeeperException {
        boolean mayExist = mayExistAtFirst;
        while (true) {
            awaitConnected(deadline);
            try {
                if (mayExist) {
                    Optional<Created> found = findCreated(lockPath, protectionId);
                    if (found.isPresent()) {
                        return found.get();
                    }
                }
                Stat stat = new Stat();
                requests.incrementAndGet();
                String path = client.create()
                        .storingStatIn(stat)
                        .creatingParentContainersIfNeeded()
                        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .forPath(ZKPaths.makePath(lockPath, nodePrefix(protectionId, kindName)), data);
                return new Created(path, stat);
            } catch (KeeperException.ConnectionLossException
                    | KeeperException.OperationTimeoutException
                    | KeeperException.SessionExpiredException e) {
                // the server may have created it: look for it before creating another (after an expiry it is gone
                // with the old session, and the next try creates it in the new one)
                mayExist = true;
                checkDeadline(deadline);
            } catch (KeeperException.NoNodeException e) {
                // The key's container node was reaped by the server (empty after a session expiry took its last
                // child) between Curator creating it and our create: nothing was created, create both again.
                checkDeadline(deadline);
            } catch (KeeperException | InterruptedException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw unexpected(e);
            }
        }
    }

    private Optional<Created> findCreated(String lockPath, String protectionId) throws Exception {
        Optional<String> name = findProtected(children(lockPath), protectionId);
        if (name.isEmpty()) {
            return Optional.empty();
        }
        String path = ZKPaths.makePath(lockPath, name.get());
        requests.incrementAndGet();
        Stat stat = client.checkExists().forPath(path);
        return stat == null ? Optional.empty() : Optional.of(new Created(path, stat));
    }

    private List<String> children(String lockPath) throws Exception {
        try {
            requests.incrementAndGet();
            return client.getChildren().forPath(lockPath);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    static Optional<String> findProtected(List<String> children, String protectionId) {
        String prefix = protectedPrefix(protectionId);
        return children.stream().filter(c -> c.startsWith(prefix)).findFirst();
    }

    /** The children of {@code path}; empty if it does not exist. */
    List<String> children(String path, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        return idempotent(deadline, () -> children(path));
    }

    /**
     * Reads {@code path} and leaves {@code watcher} on it; {@code getData} rather than {@code exists}, as Curator does,
     * so that no watch is left on a node that is already gone.
     *
     * @return false if the node does not exist (no watch is left)
     */
    boolean watch(String path, Watcher watcher, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        return idempotent(deadline, () -> {
            try {
                requests.incrementAndGet();
                client.getData().usingWatcher(watcher).forPath(path);
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        });
    }

    /** The node's stat, or null if it does not exist. */
    Stat exists(String path, Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        return idempotent(deadline, () -> {
            requests.incrementAndGet();
            return client.checkExists().forPath(path);
        });
    }

    /**
     * Deletes {@code path}; false if it was already gone, also when the session it was created in has expired (an
     * ephemeral node goes with its session).
     */
    boolean delete(String path, Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        return idempotent(deadline, () -> {
            try {
                requests.incrementAndGet();
                client.delete().forPath(path);
                return true;
            } catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException e) {
                return false;
            }
        });
    }

    /**
     * Writes {@code read}'s data back to {@code path} unchanged, if its version is still {@code read}'s: the write moves
     * the node's data version on and fires the {@code NodeDataChanged} watch on it, its content stays. A version moved
     * on meanwhile (another write) reads the node again and writes that back.
     *
     * @return false if the node is gone (nothing is written)
     */
    boolean rewrite(String path, NodeData read, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        NodeData current = read;
        while (true) {
            NodeData expected = current;
            boolean written = idempotent(deadline, () -> {
                try {
                    requests.incrementAndGet();
                    client.setData().withVersion(expected.stat().getVersion()).forPath(path, expected.data());
                    return true;
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                    return false;
                }
            });
            if (written) {
                return true;
            }
            Optional<NodeData> again = read(path, deadline);
            if (again.isEmpty()) {
                return false;
            }
            current = again.get();
        }
    }

    /** Creates the persistent node {@code path} with {@code data}; one that exists already (an answer lost) will do. */
    void createPersistent(String path, byte[] data, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        idempotent(deadline, () -> {
            try {
                requests.incrementAndGet();
                client.create().withMode(CreateMode.PERSISTENT).forPath(path, data);
            } catch (KeeperException.NodeExistsException e) {
                // created by an earlier try whose answer was lost
            }
            return null;
        });
    }

    /**
     * Sets {@code path}'s data if its version is {@code version}.
     *
     * @return the node's stat after the write; empty if the node is gone or its version moved on
     */
    Optional<Stat> setData(String path, byte[] data, int version, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        return idempotent(deadline, () -> {
            try {
                requests.incrementAndGet();
                return Optional.of(client.setData().withVersion(version).forPath(path, data));
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                return Optional.empty();
            }
        });
    }

    /**
     * Deletes {@code path} and {@code alongWith} in one transaction; if either is gone, deletes {@code path} alone.
     *
     * @return false if {@code path} was gone (as {@link #delete})
     */
    boolean deleteTogether(String path, String alongWith, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        boolean both = idempotent(deadline, () -> {
            try {
                requests.incrementAndGet();
                client.transaction()
                        .forOperations(
                                client.transactionOp().delete().forPath(path),
                                client.transactionOp().delete().forPath(alongWith));
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            }
        });
        return both || delete(path, deadline);
    }

    /** A node's data and stat, as read together. */
    record NodeData(byte[] data, Stat stat) {}

    /**
     * Makes the server this client reads from catch up with the leader first: ZooKeeper answers a session's requests
     * in order, so every read sent after the sync sees every write completed before it, also on a follower.
     */
    void sync(String path, Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        idempotent(deadline, () -> {
            requests.incrementAndGet();
            client.getZookeeperClient().getZooKeeper().sync(path, (rc, p, ctx) -> {}, null);
            return null;
        });
    }

    /** The data and stat of {@code path}; empty if it does not exist. */
    Optional<NodeData> read(String path, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        return idempotent(deadline, () -> {
            Stat stat = new Stat();
            try {
                requests.incrementAndGet();
                return Optional.of(
                        new NodeData(client.getData().storingStatIn(stat).forPath(path), stat));
            } catch (KeeperException.NoNodeException e) {
                return Optional.empty();
            }
        });
    }

    /** Deletes the node of the attempt with {@code protectionId} under {@code lockPath}, if there is one. */
    void deleteProtected(String lockPath, String protectionId, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        Optional<String> name = findProtected(children(lockPath, deadline), protectionId);
        if (name.isPresent()) {
            delete(ZKPaths.makePath(lockPath, name.get()), deadline);
        }
    }

    private interface Call<T> {
        T call() throws Exception;
    }

    /**
     * Runs a call that may be repeated, repeating it after a connection loss, or in the new session after the session
     * expired, until the deadline.
     */
    private <T> T idempotent(Deadline deadline, Call<T> call)
            throws InterruptedException, TimeoutException, KeeperException {
        while (true) {
            awaitConnected(deadline);
            try {
                return call.call();
            } catch (KeeperException.ConnectionLossException
                    | KeeperException.OperationTimeoutException
                    | KeeperException.SessionExpiredException e) {
                checkDeadline(deadline);
            } catch (KeeperException | InterruptedException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw unexpected(e);
            }
        }
    }

    /**
     * Waits until the client is connected (in the same session or, after an expiry, in a new one); the deadline passing
     * first throws. Curator keeps reconnecting after it gave a session up, so an unbounded wait rides out an outage;
     * closing the backend ends it.
     */
    private void awaitConnected(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException {
        if (client.getZookeeperClient().isConnected()) {
            return;
        }
        sessions.checkOpen();
        Object monitor = new Object();
        Runnable wake = () -> {
            synchronized (monitor) {
                monitor.notifyAll();
            }
        };
        sessions.addWakeUp(wake);
        try {
            synchronized (monitor) {
                while (!client.getZookeeperClient().isConnected()) {
                    checkDeadline(deadline);
                    sessions.checkOpen();
                    // woken by a change of connection state; re-checks at least every 100 ms
                    TimeUnit.NANOSECONDS.timedWait(
                            monitor, deadline.remainingNanos(TimeUnit.MILLISECONDS.toNanos(100)));
                }
            }
        } finally {
            sessions.removeWakeUp(wake);
        }
    }

    private static void checkDeadline(Deadline deadline) throws TimeoutException {
        if (deadline.hasPassed()) {
            throw new TimeoutException();
        }
    }

    private LockBackendException unexpected(Exception e) {
        return new LockBackendException("ZooKeeper at " + sessions.connectString() + " failed: " + e, e);
    }
}
