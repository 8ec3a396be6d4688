package io.distlock.kit.history;

import io.distlock.LockKind;
import io.distlock.RemoteLock;
import io.distlock.spi.Lease;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Records a lock history: every acquisition, release and loss with a monotonic timestamp, its fencing token, its
 * holder (owner id) and process id, and every validity the backend reported for it. Thread-safe.
 *
 * <p>Made for several JVMs on one host: {@link #toDirectory} gives each recorder its own file in a shared directory,
 * written with {@code O_APPEND} one whole line per write, and {@link HistoryChecker#read(Path)} merges the files. Every
 * recorder also keeps its events in memory for {@link #events()}.
 *
 * <p>Call {@link #acquired} right after a lock is granted and {@link #releasing} right before releasing it: the hold
 * recorded then lies within the real one, so a correct lock never shows an overlap.
 */
public final class HistoryRecorder implements AutoCloseable {

    /** The suffix of history files in a directory. */
    public static final String SUFFIX = ".history";

    private static final long PID = ProcessHandle.current().pid();

    private final Optional<FileChannel> file;
    private final List<HistoryEvent> events = new ArrayList<>();
    private final java.util.Map<String, Integer> limits = new java.util.concurrent.ConcurrentHashMap<>();

    private HistoryRecorder(Optional<FileChannel> file) {
        this.file = file;
    }

    /** A recorder that keeps its events in memory only. */
    public static HistoryRecorder inMemory() {
        return new HistoryRecorder(Optional.empty());
    }

    /**
     * A recorder that also appends to a new file {@code <pid>-<n>.history} in {@code directory} (created if missing).
     *
     * @throws UncheckedIOException if the file cannot be created
     */
    public static HistoryRecorder toDirectory(Path directory) {
        try {
            Files.createDirectories(directory);
            for (int n = 0; ; n++) {
                Path path = directory.resolve(PID + "-" + n + SUFFIX);
                try {
                    return new HistoryRecorder(Optional.of(FileChannel.open(
                            path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.APPEND)));
                } catch (java.nio.file.FileAlreadyExistsException taken) {
                    // another recorder of this process: try the next number
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create a history file in " + directory, e);
        }
    }

    /**
     * Records that {@code lock} was just granted: a lock, or a side of a read-write lock. A semaphore's permit is
     * recorded with its N by {@link #acquired(RemoteLock, int)}.
     *
     * @throws IllegalArgumentException for a permit
     */
    public void acquired(RemoteLock lock) {
        if (lock.kind() == LockKind.PERMIT) {
            throw new IllegalArgumentException("a permit's hold is recorded with the semaphore's permits: " + lock);
        }
        record(HistoryEvent.Type.ACQUIRED, lock);
    }

    /**
     * Records that {@code lock} was just granted: for a permit, one of a semaphore of {@code permits} permits; for the
     * other kinds {@code permits} is not used (as {@link #acquired(RemoteLock)}), so holds of any kind can be recorded
     * with the N of the semaphores they use.
     */
    public void acquired(RemoteLock lock, int permits) {
        if (lock.kind() == LockKind.PERMIT) {
            limits.put(lock.ownerId(), permits);
        }
        record(HistoryEvent.Type.ACQUIRED, lock);
    }

    /** Records that {@code lock} is about to be released. */
    public void releasing(RemoteLock lock) {
        record(HistoryEvent.Type.RELEASING, lock);
    }

    /** Records that {@code lock} was reported lost. */
    public void lost(RemoteLock lock) {
        record(HistoryEvent.Type.LOST, lock);
    }

    /**
     * Records that the backend reported {@code lease} valid until {@code validUntilNanos} (a {@link System#nanoTime()}
     * reading), at its grant or a renewal.
     */
    public void valid(Lease lease, long validUntilNanos) {
        valid(lease, validUntilNanos, LockKind.LOCK, 1);
    }

    /**
     * Records that the backend reported {@code lease}, a grant of {@code kind} with {@code limit} ({@link
     * io.distlock.spi.LockRequest#limit()}), valid until {@code validUntilNanos}, at its grant or a renewal.
     */
    public void valid(Lease lease, long validUntilNanos, LockKind kind, int limit) {
        record(new HistoryEvent(
                System.nanoTime(),
                HistoryEvent.Type.VALID,
                lease.key(),
                lease.fencingToken(),
                lease.ownerId(),
                PID,
                OptionalLong.of(validUntilNanos),
                kind,
                limit));
    }

    /** Records that the backend is asked to release {@code lease} (by its holder, or by the locker for a lost grant). */
    public void freed(Lease lease) {
        freed(lease, LockKind.LOCK, 1);
    }

    /** Records that the backend is asked to release {@code lease}, a grant of {@code kind} with {@code limit}. */
    public void freed(Lease lease, LockKind kind, int limit) {
        record(new HistoryEvent(
                System.nanoTime(),
                HistoryEvent.Type.FREED,
                lease.key(),
                lease.fencingToken(),
                lease.ownerId(),
                PID,
                OptionalLong.empty(),
                kind,
                limit));
    }

    /** Records an event as given; for histories built by hand. */
    public void record(HistoryEvent event) {
        synchronized (events) {
            events.add(event);
            file.ifPresent(channel -> {
                ByteBuffer line = ByteBuffer.wrap((event.toLine() + "\n").getBytes(StandardCharsets.UTF_8));
                try {
                    while (line.hasRemaining()) {
                        channel.write(line); // O_APPEND: one write per line, never interleaved with other writers
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("Cannot append to the history file", e);
                }
            });
        }
    }

    private void record(HistoryEvent.Type type, RemoteLock lock) {
        LockKind kind = lock.kind();
        int limit = kind.exclusive()
                ? 1
                : kind == LockKind.READ ? Integer.MAX_VALUE : limits.getOrDefault(lock.ownerId(), Integer.MAX_VALUE);
        record(new HistoryEvent(
                System.nanoTime(),
                type,
                lock.key(),
                lock.fencingToken(),
                lock.ownerId(),
                PID,
                OptionalLong.empty(),
                kind,
                limit));
    }

    /** The events recorded by this recorder, in recording order. */
    public List<HistoryEvent> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    /** Closes the file, if any. */
    @Override
    public void close() {
        file.ifPresent(channel -> {
            try {
                channel.close();
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot close the history file", e);
            }
        });
    }
}
