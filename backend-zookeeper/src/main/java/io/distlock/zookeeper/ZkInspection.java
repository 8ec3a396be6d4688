package io.distlock.zookeeper;

import io.distlock.LockBackendException;
import io.distlock.LockHolder;
import io.distlock.LockKind;
import io.distlock.LockState;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.toolkit.DurationText;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;

/**
 * Who holds a key, read from ZooKeeper, and breaking a held key: the nodes of the key's three queues ({@link ZkQueue}'s
 * layout), their holders by the grant rule, each holder node's data (the owner id; Curator writes its client's address
 * there; an election's node holds the candidate's identity, shown as both label and owner id: see {@link
 * ZkQueue#holdsIdentity}) and stat (creation time, {@code czxid}: the fencing token). Every look-up starts with a
 * {@code sync}, so a follower answers with every write the leader completed before it. Breaking deletes the holders' nodes as {@code zkCli.sh
 * delete} would; each holder's watch on its own node tells it at once, and the next node in the queue is granted as after
 * a release.
 */
final class ZkInspection {

    private final ZkCalls calls;
    private final String basePath;
    private final String connectString;
    private final Ticker ticker;
    private final Duration operationTimeout;

    ZkInspection(ZkCalls calls, String basePath, String connectString, Ticker ticker, Duration operationTimeout) {
        this.calls = calls;
        this.basePath = basePath;
        this.connectString = connectString;
        this.ticker = ticker;
        this.operationTimeout = operationTimeout;
    }

    /** The holders of a queue's head, with where their nodes are and what they hold. */
    private record Held(List<String> paths, List<ZkCalls.NodeData> reads, List<LockHolder> holders, int waiting) {}

    LockState inspect(String key) {
        return call("inspecting '" + key + "'", deadline -> {
            calls.sync(basePath, deadline);
            return state(key, deadline);
        });
    }

    List<LockState> listHeld() {
        return call("listing the held keys", deadline -> {
            calls.sync(basePath, deadline);
            TreeSet<String> keys = new TreeSet<>();
            keys.addAll(keysUnder(basePath, deadline));
            keys.addAll(keysUnder(ZKPaths.makePath(basePath, ZkQueue.READ_WRITE_DIRECTORY), deadline));
            keys.addAll(keysUnder(ZKPaths.makePath(basePath, ZkQueue.SEMAPHORE_DIRECTORY), deadline));
            List<LockState> held = new ArrayList<>();
            for (String key : keys) {
                LockState state = state(key, deadline);
                if (state.held()) {
                    held.add(state);
                }
            }
            return held;
        });
    }

    List<LockHolder> breakLock(String key) {
        return eachHolder("breaking '" + key + "'", key, (path, read, deadline) -> {
            // a broken grant ends as a released one: its lock-delay record goes first, so no waiter sees it orphaned
            Optional<String> record =
                    ZkLockDelay.recordPathOf(ZKPaths.getPathAndNode(path).getPath(), ZKPaths.getNodeFromPath(path));
            if (record.isPresent()) {
                calls.delete(record.get(), deadline);
            }
            return calls.delete(path, deadline);
        });
    }

    /**
     * Writes each holder node's data back unchanged, which moves its data version on: the holder's watch on its own node
     * fires, and each step of the version is one request to it ({@link ZkLease#dataVersionRead}). Nothing else is
     * written, so a key found free keeps nothing, and a later holder's node, a new node, has no request.
     */
    List<LockHolder> requestRelease(String key) {
        return eachHolder("asking the holders of '" + key + "' to let go", key, calls::rewrite);
    }

    /** What {@link #eachHolder} does to a holder's node: false if the node was gone. */
    private interface HolderWrite {
        boolean apply(String path, ZkCalls.NodeData read, Deadline deadline)
                throws InterruptedException, TimeoutException, KeeperException;
    }

    /** A {@code sync}, then {@code write} on each holder node of the key's three queues: the holders written. */
    private List<LockHolder> eachHolder(String what, String key, HolderWrite write) {
        return call(what, deadline -> {
            calls.sync(basePath, deadline);
            List<LockHolder> written = new ArrayList<>();
            for (LockKind.Space space : LockKind.Space.values()) {
                Held held = held(key, space, deadline);
                for (int i = 0; i < held.paths().size(); i++) {
                    if (write.apply(held.paths().get(i), held.reads().get(i), deadline)) {
                        written.add(held.holders().get(i));
                    }
                }
            }
            return written;
        });
    }

    private LockState state(String key, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        List<LockHolder> holders = new ArrayList<>();
        int waiting = 0;
        for (LockKind.Space space : LockKind.Space.values()) {
            Held held = held(key, space, deadline);
            holders.addAll(held.holders());
            waiting += held.waiting();
        }
        return new LockState(key, holders, OptionalInt.of(waiting));
    }

    /** The holders of {@code key}'s queue of {@code space}; a node deleted while being read is left out. */
    private Held held(String key, LockKind.Space space, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        String path = ZkQueue.path(basePath, space, KeyCodec.encode(key));
        List<String> queue = new ArrayList<>(calls.children(path, deadline));
        queue.removeIf(ZkQueue::isDelayRecord);
        queue.sort(ZkQueue.order(space));
        int count = ZkQueue.holders(space, queue);
        List<String> paths = new ArrayList<>();
        List<ZkCalls.NodeData> reads = new ArrayList<>();
        List<LockHolder> holders = new ArrayList<>();
        for (String name : queue.subList(0, count)) {
            String node = ZKPaths.makePath(path, name);
            Optional<ZkCalls.NodeData> read = calls.read(node, deadline);
            if (read.isPresent()) {
                paths.add(node);
                reads.add(read.get());
                String data = new String(read.get().data(), StandardCharsets.UTF_8);
                Optional<Instant> since =
                        Optional.of(Instant.ofEpochMilli(read.get().stat().getCtime()));
                OptionalLong token = OptionalLong.of(read.get().stat().getCzxid());
                holders.add(
                        ZkQueue.holdsIdentity(space, key)
                                ? new LockHolder(kind(space, name), data, data, since, Optional.empty(), token)
                                : LockHolder.of(kind(space, name), data, since, Optional.empty(), token));
            }
        }
        return new Held(paths, reads, holders, queue.size() - count);
    }

    private static LockKind kind(LockKind.Space space, String name) {
        return switch (space) {
            case LOCK -> LockKind.LOCK;
            case READ_WRITE -> name.contains(ZkQueue.READ_NAME) ? LockKind.READ : LockKind.WRITE;
            case SEMAPHORE -> LockKind.PERMIT;
        };
    }

    /** The keys whose nodes are children of {@code path}; names that are no encoded key (the spaces') are skipped. */
    private List<String> keysUnder(String path, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        List<String> keys = new ArrayList<>();
        for (String name : calls.children(path, deadline)) {
            if (!name.startsWith("@")) {
                try {
                    keys.add(KeyCodec.decode(name));
                } catch (IllegalArgumentException notOurs) {
                    // a node another program put under the base path
                }
            }
        }
        return keys;
    }

    private interface Reads<T> {
        T read(Deadline deadline) throws InterruptedException, TimeoutException, KeeperException;
    }

    private <T> T call(String what, Reads<T> reads) {
        try {
            return reads.read(Deadline.after(operationTimeout, ticker));
        } catch (TimeoutException e) {
            throw new LockBackendException("No answer from ZooKeeper at " + connectString + " within "
                    + DurationText.of(operationTimeout) + " " + what);
        } catch (KeeperException e) {
            throw new LockBackendException("ZooKeeper at " + connectString + " failed " + what + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("Interrupted " + what, e);
        }
    }
}
