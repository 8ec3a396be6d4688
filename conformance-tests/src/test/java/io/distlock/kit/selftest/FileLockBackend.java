package io.distlock.kit.selftest;

import io.distlock.Capabilities;
import io.distlock.LeaseModel;
import io.distlock.LockBackendException;
import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.Ticker;
import io.distlock.spi.Deadline;
import io.distlock.spi.Lease;
import io.distlock.spi.LockBackend;
import io.distlock.spi.LockRequest;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code lockfile:} store: see {@link FileLockBackendProvider}. Polls; not fair; fencing from a counter file. A
 * file per key and space holds its holders, a line each, so read-write locks and semaphores are served by the grant
 * rule of {@link LockRequest} (without a queue: whoever polls first when there is room). A writer's waiter file marks
 * the read-write lock while it waits, and a reader is refused while such a mark lives, so that readers do not starve
 * a waiting writer.
 */
final class FileLockBackend implements LockBackend {

    enum Defect {
        NONE,
        RACY,
        FALLING_TOKENS,
        CONTENDED_TRYLOCK,
        NEVER_EXPIRES,
        GENEROUS_VALIDITY,
        LEAVES_WAITERS,
        WAITS_THROUGH_OUTAGES,
        JVM_ONLY,
        READERS_OVERTAKE
    }

    /** How much longer than the lease the {@link Defect#GENEROUS_VALIDITY} variant says a lease is valid. */
    private static final int GENEROSITY = 10;

    private static final long A_DAY_NANOS = java.time.Duration.ofDays(1).toNanos();

    private static final Capabilities CAPABILITIES = new Capabilities(true, false, false, LeaseModel.RENEWED_TTL)
            .with(LockKind.READ, LockKind.WRITE, LockKind.PERMIT);
    private static final ReentrantLock JVM_MUTEX = new ReentrantLock(); // OS file locks exclude processes, not threads
    private static final long POLL_NANOS = 5_000_000;

    private final Path dir;
    private final Ticker ticker;
    private final Defect defect;

    /** One holder in a lock file. */
    private record Entry(String owner, long expiresNanos, long token, LockKind kind, int limit) {
        Entry(String owner, long expiresNanos, long token) {
            this(owner, expiresNanos, token, LockKind.LOCK, 1);
        }

        boolean liveAt(long now) {
            return expiresNanos - now > 0;
        }
    }

    private static final class FileLease implements Lease {
        private final LockKind kind;
        private final int limit;
        private final String key;
        private final String owner;
        private final long token;
        private volatile long validUntil;

        FileLease(LockRequest request, long token, long validUntil) {
            this.kind = request.kind();
            this.limit = request.limit();
            this.key = request.key();
            String owner = request.ownerId();
            this.owner = owner;
            this.token = token;
            this.validUntil = validUntil;
        }

        @Override
        public String key() {
            return key;
        }

        @Override
        public String ownerId() {
            return owner;
        }

        @Override
        public OptionalLong fencingToken() {
            return OptionalLong.of(token);
        }

        @Override
        public long validUntilNanos() {
            return validUntil;
        }
    }

    FileLockBackend(Path dir, Ticker ticker, Defect defect) {
        this.dir = dir;
        this.ticker = ticker;
        this.defect = defect;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new LockBackendException("Cannot create the lock directory " + dir, e);
        }
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public Optional<Lease> tryAcquire(LockRequest request) {
        if (defect == Defect.CONTENDED_TRYLOCK) {
            return contended(request);
        }
        return attempt(request);
    }

    /**
     * How long a {@link Defect#CONTENDED_TRYLOCK} attempt waits for rivals: longer than the quarter round (75 ms)
     * within which the kit counts attempts across processes as simultaneous, so that every such round catches the
     * defect however the threads' starts spread on a loaded machine (with a round trip of 4 ms, as it was, simultaneous
     * attempts on a busy machine often missed each other and the defect went unseen).
     */
    private static final long CONTENDED_WINDOW_MILLIS = 100;

    /** Announces the attempt, waits for rivals, and gives up if any other attempt was announced meanwhile. */
    private Optional<Lease> contended(LockRequest request) {
        String prefix = fileOf(request.kind(), request.key()).getFileName() + ".attempt.";
        Path mine = dir.resolve(prefix + request.ownerId());
        try {
            Files.createFile(mine);
            try {
                Thread.sleep(CONTENDED_WINDOW_MILLIS);
                try (java.util.stream.Stream<Path> all = Files.list(dir)) {
                    if (all.filter(p -> p.getFileName().toString().startsWith(prefix))
                                    .count()
                            > 1) {
                        return Optional.empty();
                    }
                }
                return attempt(request);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            } finally {
                Files.deleteIfExists(mine);
            }
        } catch (IOException e) {
            throw new LockBackendException("lock directory " + dir + ": " + e, e);
        }
    }

    private Optional<Lease> attempt(LockRequest request) {
        long now = ticker.read();
        long leaseNanos = request.leaseTime().toNanos();
        return atomically(() -> {
            Path file = fileOf(request.kind(), request.key());
            List<Entry> live = new ArrayList<>(
                    read(file).stream().filter(e -> e.liveAt(now)).toList());
            checkLimit(live, request);
            if (!grantable(live, request)) {
                return Optional.empty();
            }
            if (request.kind() == LockKind.READ && defect != Defect.READERS_OVERTAKE && writerWaits(request.key())) {
                return Optional.empty(); // a writer waits: readers that come after it wait behind it
            }
            if (defect == Defect.RACY || defect == Defect.JVM_ONLY) {
                pause(); // a store round trip between the check and the write, with nothing to make them atomic
            }
            long token = nextToken();
            live.add(new Entry(request.ownerId(), now + stored(leaseNanos), token, request.kind(), request.limit()));
            write(file, live);
            return Optional.of(new FileLease(request, token, validUntil(now, leaseNanos)));
        });
    }

    /**
     * The grant rule of {@link LockRequest} among the live holders: an exclusive request when there are none, a shared
     * one when none is exclusive and fewer than the smallest limit among them and itself hold.
     */
    private static boolean grantable(List<Entry> live, LockRequest request) {
        if (request.exclusive()) {
            return live.isEmpty();
        }
        int limit = request.limit();
        for (Entry e : live) {
            if (e.kind().exclusive()) {
                return false;
            }
            limit = Math.min(limit, e.limit());
        }
        return live.size() < limit;
    }

    /** Refuses a permit whose semaphore is held with another number of permits. */
    private static void checkLimit(List<Entry> live, LockRequest request) {
        if (request.kind() != LockKind.PERMIT) {
            return;
        }
        for (Entry e : live) {
            if (e.limit() != request.limit()) {
                throw new LockConfigurationException("Semaphore '" + request.key() + "' is in use with " + e.limit()
                        + " permits; this call asks for it with " + request.limit()
                        + ": every user of a semaphore must give the same number of permits");
            }
        }
    }

    /**
     * Polls, with a waiter file next to the lock file while it waits (removed when it stops waiting). The waiter file
     * is a lease too: touched at every poll, it expires a lease time after the last touch (its name carries the lease
     * in milliseconds), so a waiter that dies or loses the store while waiting leaves nothing for longer.
     */
    @Override
    public Optional<Lease> acquire(LockRequest request, Deadline deadline) throws InterruptedException {
        Path waiter = dir.resolve(fileName(request.kind(), request.key()) + WAITER
                + (request.kind() == LockKind.WRITE ? WRITER : "") + java.util.UUID.randomUUID() + "."
                + request.leaseTime().toMillis());
        Optional<Lease> lease = Optional.empty();
        try {
            if (defect != Defect.WAITS_THROUGH_OUTAGES || Files.isDirectory(dir)) {
                Files.createFile(waiter);
            }
            while (true) {
                touch(waiter);
                try {
                    lease = tryAcquire(request);
                } catch (LockBackendException storeDown) {
                    if (defect != Defect.WAITS_THROUGH_OUTAGES) {
                        throw storeDown;
                    }
                }
                if (lease.isPresent() || deadline.hasPassed()) {
                    return lease;
                }
                Thread.sleep(Math.max(1, deadline.remainingNanos(POLL_NANOS) / 1_000_000));
            }
        } catch (IOException e) {
            throw new LockBackendException("lock directory " + dir + ": " + e, e);
        } finally {
            if (defect != Defect.LEAVES_WAITERS || lease.isPresent()) {
                try {
                    Files.deleteIfExists(waiter);
                } catch (IOException e) {
                    throw new LockBackendException("lock directory " + dir + ": " + e, e);
                }
            }
        }
    }

    /** The file that holds {@code key}'s lock, for a test that deletes it behind the holder's back. */
    static Path lockFile(Path dir, String key) {
        return dir.resolve(fileName(LockKind.LOCK, key));
    }

    /**
     * What the store holds for {@code key}: its lock files (of the lock, the read-write lock and the semaphore) and any
     * live waiter files, one line each. A lock file whose
     * entry ran out (a holder that could not release it, say while the store was down) is no longer held, as a TTL
     * store's expired key is gone; it is left for the next attempt to overwrite. Read on the system clock: the kit
     * looks only after its runs on it.
     */
    static java.util.List<String> entries(Path dir, String key) throws IOException {
        List<String> names = java.util.stream.Stream.of(LockKind.LOCK, LockKind.WRITE, LockKind.PERMIT)
                .map(kind -> fileName(kind, key))
                .toList();
        try (java.util.stream.Stream<Path> all = Files.list(dir)) {
            return all.filter(p -> names.stream().anyMatch(p.getFileName().toString()::startsWith))
                    .filter(p -> !expiredWaiter(p))
                    .filter(p -> !expiredLock(p))
                    .map(p -> p.getFileName().toString())
                    .sorted()
                    .toList();
        }
    }

    private static final String WAITER = ".waiter.";

    /** What follows {@link #WAITER} in the name of a writer's waiter file: the mark that holds readers back. */
    private static final String WRITER = "writer.";

    /** Whether a writer of {@code key}'s read-write lock waits: a live waiter file of a writer. */
    private boolean writerWaits(String key) throws IOException {
        String marks = fileName(LockKind.WRITE, key) + WAITER + WRITER;
        try (java.util.stream.Stream<Path> all = Files.list(dir)) {
            return all.filter(p -> p.getFileName().toString().startsWith(marks)).anyMatch(p -> !expiredWaiter(p));
        }
    }

    /** Refreshes a waiter file's lease; a waiter file lost with the store (moved away) is created again. */
    private static void touch(Path waiter) {
        try {
            Files.setLastModifiedTime(waiter, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()));
        } catch (IOException gone) {
            try {
                Files.createFile(waiter);
            } catch (IOException storeDown) {
                // the store is down: the waiter's next poll fails and ends the wait
            }
        }
    }

    /** Whether {@code path} is a lock file whose entry ran out (on the system clock). */
    private static boolean expiredLock(Path path) {
        if (!path.getFileName().toString().endsWith(".lock")) {
            return false;
        }
        try {
            long now = Ticker.system().read();
            List<Entry> entries = read(path);
            return !entries.isEmpty() && entries.stream().noneMatch(e -> e.liveAt(now));
        } catch (IOException e) {
            return false; // unreadable: report it
        }
    }

    /** Whether {@code path} is a waiter file whose lease ran out: deleted, as the store's own expiry would. */
    private static boolean expiredWaiter(Path path) {
        String n = path.getFileName().toString();
        int at = n.indexOf(WAITER);
        if (at < 0) {
            return false;
        }
        try {
            long leaseMillis = Long.parseLong(n.substring(n.lastIndexOf('.') + 1));
            long touched = Files.getLastModifiedTime(path).toMillis();
            if (touched + leaseMillis >= System.currentTimeMillis()) {
                return false;
            }
            Files.deleteIfExists(path);
            return true;
        } catch (NumberFormatException | IOException e) {
            return true; // gone meanwhile
        }
    }

    @Override
    public OptionalLong renew(Lease lease, Duration leaseTime) {
        FileLease ours = (FileLease) lease;
        long now = ticker.read();
        long leaseNanos = leaseTime.toNanos();
        boolean renewed = atomically(() -> {
            Path file = fileOf(ours.kind, ours.key);
            List<Entry> live = new ArrayList<>(
                    read(file).stream().filter(e -> e.liveAt(now)).toList());
            int mine = indexOf(live, ours.owner);
            if (mine < 0) {
                return false;
            }
            live.set(mine, new Entry(ours.owner, now + stored(leaseNanos), ours.token, ours.kind, ours.limit));
            write(file, live);
            ours.validUntil = validUntil(now, leaseNanos);
            return true;
        });
        return renewed ? OptionalLong.of(ours.validUntil) : OptionalLong.empty();
    }

    @Override
    public boolean release(Lease lease) {
        FileLease ours = (FileLease) lease;
        return atomically(() -> {
            Path file = fileOf(ours.kind, ours.key);
            List<Entry> entries = new ArrayList<>(read(file));
            int mine = indexOf(entries, ours.owner);
            if (mine < 0) {
                return false;
            }
            entries.remove(mine);
            if (entries.isEmpty()) {
                Files.deleteIfExists(file);
            } else {
                write(file, entries);
            }
            return true;
        });
    }

    private static int indexOf(List<Entry> entries, String owner) {
        for (int i = 0; i < entries.size(); i++) {
            if (entries.get(i).owner().equals(owner)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public void close() {
        // nothing held open between operations
    }

    /** The validity reported for a lease of {@code leaseNanos} granted or renewed at {@code now}. */
    private long validUntil(long now, long leaseNanos) {
        return now + (defect == Defect.GENEROUS_VALIDITY ? GENEROSITY * leaseNanos : leaseNanos);
    }

    /** How long the store keeps an entry of a lease of {@code leaseNanos}. */
    private long stored(long leaseNanos) {
        return defect == Defect.NEVER_EXPIRES ? A_DAY_NANOS : leaseNanos;
    }

    private interface Step<T> {
        T run() throws IOException;
    }

    private <T> T atomically(Step<T> step) {
        try {
            if (defect == Defect.RACY) {
                return step.run();
            }
            if (defect == Defect.JVM_ONLY) {
                JVM_MUTEX.lock(); // excludes this JVM's threads; another process runs the same step meanwhile
                try {
                    return step.run();
                } finally {
                    JVM_MUTEX.unlock();
                }
            }
            JVM_MUTEX.lock();
            try (FileChannel channel = FileChannel.open(
                            dir.resolve(".mutex"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock ignored = channel.lock()) {
                return step.run();
            } finally {
                JVM_MUTEX.unlock();
            }
        } catch (IOException e) {
            throw new LockBackendException("lock directory " + dir + ": " + e, e);
        }
    }

    private long nextToken() throws IOException {
        Path counter = dir.resolve(".fence");
        long next = read(counter).stream().mapToLong(Entry::token).findFirst().orElse(0L) + 1;
        write(counter, List.of(new Entry("-", 0, next)));
        return defect == Defect.FALLING_TOKENS ? 1_000_000_000L - next : next;
    }

    private Path fileOf(LockKind kind, String key) {
        return dir.resolve(fileName(kind, key));
    }

    /** The lock's file keeps the name it always had; a read-write lock's and a semaphore's have their space in it. */
    private static String fileName(LockKind kind, String key) {
        String named = kind.space() == LockKind.Space.LOCK ? key : kind.space() + "\0" + key;
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(named.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash) + ".lock";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The entries of a lock file, a line each; none if it is missing, and none of a torn line (the racy variant). */
    private static List<Entry> read(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (NoSuchFileException e) {
            return List.of();
        }
        List<Entry> entries = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length != 3 && f.length != 5) {
                continue; // only the racy variant ever sees a half-written file
            }
            try {
                entries.add(
                        f.length == 3
                                ? new Entry(f[0], Long.parseLong(f[1]), Long.parseLong(f[2]))
                                : new Entry(
                                        f[0],
                                        Long.parseLong(f[1]),
                                        Long.parseLong(f[2]),
                                        LockKind.valueOf(f[3]),
                                        Integer.parseInt(f[4])));
            } catch (IllegalArgumentException e) {
                // a torn line, as above
            }
        }
        return entries;
    }

    private static void write(Path file, List<Entry> entries) throws IOException {
        StringBuilder text = new StringBuilder();
        for (Entry e : entries) {
            text.append(e.owner())
                    .append(' ')
                    .append(e.expiresNanos())
                    .append(' ')
                    .append(e.token())
                    .append(' ')
                    .append(e.kind())
                    .append(' ')
                    .append(e.limit())
                    .append('\n');
        }
        Files.writeString(file, text.toString(), StandardCharsets.UTF_8);
    }

    private static void pause() {
        try {
            Thread.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
