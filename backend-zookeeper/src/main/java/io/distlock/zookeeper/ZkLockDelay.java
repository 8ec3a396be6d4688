package io.distlock.zookeeper;

import io.distlock.spi.Deadline;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock-delay on a session store, kept by the lockers among themselves, since the server deletes an ephemeral node
 * at its session's expiry without a trace of how it went.
 *
 * <ul>
 *   <li>A holder whose locker has a lock-delay writes a record right after its grant: the persistent node {@code
 *       <queue path>/~delay-<its protection id>} ({@link ZkQueue#DELAY_RECORD}) holding the delay in milliseconds. A
 *       release deletes it together with the holder's node, in one transaction; {@code breakLock} deletes it too.
 *   <li>So a record whose grant's node is gone marks a grant that ended without a release. Every acquirer lists the
 *       queue anyway, and sees it there: the first one granted by the queue's rule marks it ({@code setData}: its
 *       {@code mtime}, on the server's clock, is no earlier than the end) and is granted once the server's clock has
 *       passed that mark by the delay; it then deletes the record. The server's clock is read as the acquirer's own
 *       node's {@code ctime} plus the time since its creation was answered, which is never ahead of it.
 *   <li>A persistent child keeps the queue's container node from being reaped, so the record outlives an empty queue.
 * </ul>
 *
 * Every distlock locker honours a record, with or without a lock-delay of its own; Curator's recipes do not (they sort
 * a record after every queue node, and never wait on it).
 */
final class ZkLockDelay {

    private static final Logger log = LoggerFactory.getLogger(ZkLockDelay.class);
    /** What a record's data ends with once an acquirer saw it without its node. */
    private static final String ENDED = " ended";
    /** The length of a protection id: a UUID's text. */
    private static final int PROTECTION_ID_LENGTH = 36;

    private final ZkCalls calls;
    /** This locker's lock-delay, in milliseconds; 0 for none. */
    private final long delayMillis;

    ZkLockDelay(ZkCalls calls, long delayMillis) {
        this.calls = calls;
        this.delayMillis = delayMillis;
    }

    /** Whether this locker's grants write a record. */
    boolean writesRecords() {
        return delayMillis > 0;
    }

    /** The record of the grant of the node with {@code protectionId} under {@code queuePath}. */
    static String recordPath(String queuePath, String protectionId) {
        return ZKPaths.makePath(queuePath, ZkQueue.DELAY_RECORD + protectionId);
    }

    /**
     * The record a queue node named {@code nodeName} would have: the node's protection id follows the protected prefix
     * ({@link ZkCalls#protectedPrefix}); empty for a name without one.
     */
    static Optional<String> recordPathOf(String queuePath, String nodeName) {
        int start = ZkCalls.PROTECTED_PREFIX.length();
        int end = start + PROTECTION_ID_LENGTH;
        if (!nodeName.startsWith(ZkCalls.PROTECTED_PREFIX) || nodeName.length() <= end || nodeName.charAt(end) != '-') {
            return Optional.empty();
        }
        return Optional.of(recordPath(queuePath, nodeName.substring(start, end)));
    }

    /** Writes the record of a grant, with this locker's delay. */
    String write(String queuePath, String protectionId, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        String path = recordPath(queuePath, protectionId);
        calls.createPersistent(path, Long.toString(delayMillis).getBytes(StandardCharsets.UTF_8), deadline);
        return path;
    }

    /**
     * How long a grant by the queue's rule must still wait for the records of grants that ended without a release:
     * 0 if none is left. Marks each such record the first time it is seen, and deletes those whose delay has passed.
     *
     * @param records the records among the queue path's children
     * @param queue the queue nodes among them
     * @param serverNowMillis the server's clock now, at most
     */
    long leftNanos(String queuePath, List<String> records, List<String> queue, long serverNowMillis, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        long left = 0;
        for (String record : records) {
            String prefix = ZkCalls.protectedPrefix(record.substring(ZkQueue.DELAY_RECORD.length()));
            if (queue.stream().anyMatch(name -> name.startsWith(prefix))) {
                continue; // its grant is still held (a reader or permit beside us)
            }
            left = Math.max(left, orphanLeftNanos(ZKPaths.makePath(queuePath, record), serverNowMillis, deadline));
        }
        return left;
    }

    private long orphanLeftNanos(String path, long serverNowMillis, Deadline deadline)
            throws InterruptedException, TimeoutException, KeeperException {
        while (true) {
            Optional<ZkCalls.NodeData> read = calls.read(path, deadline);
            if (read.isEmpty()) {
                return 0;
            }
            String data = new String(read.get().data(), StandardCharsets.UTF_8);
            boolean ended = data.endsWith(ENDED);
            long delay;
            try {
                delay = Long.parseLong(ended ? data.substring(0, data.length() - ENDED.length()) : data);
            } catch (NumberFormatException e) {
                log.debug("Ignoring the node {}, which holds no lock-delay: {}", path, data);
                return 0;
            }
            long endedAtMillis;
            if (ended) {
                endedAtMillis = read.get().stat().getMtime();
            } else {
                Optional<Stat> marked = calls.setData(
                        path,
                        (data + ENDED).getBytes(StandardCharsets.UTF_8),
                        read.get().stat().getVersion(),
                        deadline);
                if (marked.isEmpty()) {
                    continue; // marked or deleted meanwhile: read it again
                }
                endedAtMillis = marked.get().getMtime();
                log.debug("A grant ended without a release (its lock-delay record {} has no node)", path);
            }
            long leftMillis = endedAtMillis + delay - serverNowMillis;
            if (leftMillis > 0) {
                return TimeUnit.MILLISECONDS.toNanos(leftMillis);
            }
            calls.delete(path, deadline);
            return 0;
        }
    }
}
