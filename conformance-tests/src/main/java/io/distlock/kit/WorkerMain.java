package io.distlock.kit;

import io.distlock.Candidacy;
import io.distlock.LeadershipListener;
import io.distlock.LockKind;
import io.distlock.RemoteLock;
import io.distlock.RemoteLocker;
import io.distlock.RemoteLockerBuilder;
import io.distlock.RemoteLockers;
import io.distlock.Term;
import io.distlock.kit.history.HistoryRecorder;
import io.distlock.toolkit.DurationText;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker process of the kit's multi-process tests: a JVM the kit starts from the test classpath, which opens the
 * store by URI and runs one scripted workload, then exits. Not an API: its arguments and output are the kit's own
 * protocol.
 *
 * <p>Arguments are {@code name=value} lines on stdin, ended by an empty line (not on the command line, which every
 * local user can read and where a URI's {@code password=} would show; arguments on the command line are read too):
 * {@code uri}, {@code ttlMillis}, {@code key}, {@code dir} (shared with the kit
 * and the other workers), {@code mode} ({@code lock}, {@code trylock}, {@code hold}, {@code kinds}, {@code rounds},
 * {@code random} or {@code candidate}), {@code threads}, {@code count} (critical sections per thread, holds, rounds, or the random run's keys),
 * {@code holdMillis} (a hold, a round, or the random run's wait), {@code maxWaitMillis}; optionally {@code
 * connectTimeoutMillis} (unless the URI gives one, as a fixture may for a worker's slower start), {@code seed} for {@code random}, which runs the randomized run's operations ({@link
 * RandomOperations}) until a file {@code stop} appears in {@code dir}, and for {@code hold} and {@code kinds} (holds of
 * {@code holdMillis} each, recorded in the history) {@code kind} ({@code lock}, {@code read}, {@code write}, {@code
 * permit}, or {@code readwrite}: a write in four, reads otherwise) and {@code permits} (a semaphore's N), and for
 * {@code candidate} (a candidate of the election named {@code key} for {@code holdMillis}) {@code identity}.
 *
 * <p>It reports on stdout, one event a line: {@code READY pid}, {@code ACQUIRED owner token}, {@code WRITE owner
 * token}, {@code LOST owner}, {@code HELD owner held=b lost=n}, {@code RELEASED owner result},
 * {@code OVERLAP detail}, {@code OPEN}, {@code TAKING key} (a hold asks for the lock), {@code ROUNDS wins...}, {@code LATE n...}, {@code FREED round nanos}, {@code PROGRESS acquired} (the random run's count so far), {@code OUTCOMES outcome=n...}, {@code ELECTED identity epoch}, {@code REVOKED identity reason}, {@code DONE ...}, {@code FAILED message}. It exits when its stdin closes, so a worker never
 * outlives the kit.
 */
public final class WorkerMain {

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    /** How often the randomized run's worker reports the locks it acquired so far ({@code PROGRESS n}). */
    private static final long PROGRESS_MILLIS = 200;

    private final Map<String, String> args;
    private final Path dir;
    private final String key;
    private final Duration maxWait;
    private final HistoryRecorder history;
    private final AtomicLong maxWaitNanos = new AtomicLong();
    private final AtomicLong sections = new AtomicLong();
    private final AtomicLong withdrawals = new AtomicLong();
    private final AtomicLong deposits = new AtomicLong();
    private final AtomicLong lowest = new AtomicLong(UnguardedAccount.START_BALANCE);
    private final String kind;
    private final int permits;

    private WorkerMain(Map<String, String> args) {
        this.args = args;
        this.dir = Paths.get(arg("dir"));
        this.key = arg("key");
        this.maxWait = Duration.ofMillis(Long.parseLong(arg("maxWaitMillis")));
        this.history = HistoryRecorder.toDirectory(dir.resolve("history"));
        this.kind = args.getOrDefault("kind", "lock");
        this.permits = Integer.parseInt(args.getOrDefault("permits", "1"));
    }

    /** Runs the workload given by {@code args}; exits 0 when done, 1 on failure. */
    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (String a : argv) {
            put(args, a);
        }
        try {
            for (String line = stdinLine(); !line.isEmpty(); line = stdinLine()) {
                put(args, line);
            }
        } catch (IOException e) {
            say("FAILED could not read the arguments from stdin: " + e);
            Runtime.getRuntime().halt(1);
        }
        exitWhenStdinCloses();
        say("READY " + ProcessHandle.current().pid());
        try {
            new WorkerMain(args).run();
        } catch (Throwable e) {
            say("FAILED " + e.toString().replace('\n', ' '));
            e.printStackTrace();
            Runtime.getRuntime().halt(1);
        }
        Runtime.getRuntime().halt(0); // no shutdown hooks: the kit has read everything it needs
    }

    private static void put(Map<String, String> args, String nameValue) {
        int eq = nameValue.indexOf('=');
        args.put(nameValue.substring(0, eq), nameValue.substring(eq + 1));
    }

    /** One line of stdin, read byte by byte so that nothing after it is taken from the stream; empty at its end. */
    private static String stdinLine() throws IOException {
        java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
        for (int b = System.in.read(); b >= 0 && b != '\n'; b = System.in.read()) {
            line.write(b);
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    private String arg(String name) {
        String value = args.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing worker argument " + name);
        }
        return value;
    }

    private void run() throws Exception {
        String mode = arg("mode");
        int threads = Integer.parseInt(arg("threads"));
        int count = Integer.parseInt(arg("count"));
        String uri = arg("uri");
        // Every validity the backend reports goes into the history, for the check that a lost hold's validity ended in
        // time.
        InterceptingProvider provider = new InterceptingProvider(RemoteLockers.provider(KitUris.scheme(uri)), history);
        RemoteLockerBuilder builder = RemoteLockers.builder()
                .uri(uri)
                .provider(provider)
                .leaseTime(Duration.ofMillis(Long.parseLong(arg("ttlMillis"))));
        if (args.containsKey("connectTimeoutMillis") && !KitUris.hasOption(uri, "connectTimeout")) {
            builder.connectTimeout(Duration.ofMillis(Long.parseLong(arg("connectTimeoutMillis"))));
        }
        try (RemoteLocker locker = builder.build()) {
            if (mode.equals("rounds")) {
                rounds(locker, threads, count);
            } else if (mode.equals("random")) {
                random(locker, threads, count);
            } else if (mode.equals("candidate")) {
                candidate(locker);
            } else {
                Concurrently.run("worker-" + mode, threads, maxWait.multipliedBy(count + 2L), i -> {
                    for (int n = 0; n < count; n++) {
                        switch (mode) {
                            case "lock", "trylock" -> criticalSection(locker, mode.equals("trylock"));
                            case "hold" -> hold(locker);
                            case "kinds" -> kindHold(locker, n + i);
                            default -> throw new IllegalArgumentException("unknown mode " + mode);
                        }
                    }
                });
            }
        }
        history.close();
        say("DONE sections=" + sections + " withdrawals=" + withdrawals + " deposits=" + deposits + " lowest=" + lowest
                + " maxWaitNanos=" + maxWaitNanos);
    }

    /**
     * Joins the election named by {@code key} as {@code identity} and stays a candidate for {@code holdMillis} (the
     * kit kills it before), reporting each time it is elected ({@code ELECTED identity epoch}, {@code -} without
     * fencing) and each term's end ({@code REVOKED identity reason}).
     */
    private void candidate(RemoteLocker locker) throws InterruptedException {
        String identity = arg("identity");
        LeadershipListener listener = new LeadershipListener() {
            @Override
            public void elected(Term term) {
                say("ELECTED " + identity + " "
                        + (term.epoch().isPresent() ? Long.toString(term.epoch().getAsLong()) : "-"));
            }

            @Override
            public void revoked(Term term, Reason reason) {
                say("REVOKED " + identity + " " + reason);
            }
        };
        try (Candidacy candidacy = locker.election(key).join(identity, listener)) {
            Thread.sleep(Long.parseLong(arg("holdMillis")));
        }
    }

    /**
     * Theorem 4 across processes: after the kit's go (a file holding the start time on the host's monotonic clock),
     * every thread of every worker calls {@code tryLock} at the start of each round; a winner holds the lock for half
     * a round. Reports the wins of this process per round.
     */
    private void rounds(RemoteLocker locker, int threads, int rounds) throws Exception {
        // Warm up (class loading, the client's first requests) on another key, so that round 0's attempts take no
        // longer than later ones: an attempt still running when the next round starts would block that round.
        locker.tryLock(key + "-warm-up").ifPresent(RemoteLock::release);
        say("OPEN " + ProcessHandle.current().pid());
        Path go = dir.resolve("go");
        long giveUp = System.nanoTime() + maxWait.toNanos();
        while (!Files.exists(go)) {
            if (System.nanoTime() > giveUp) {
                throw new IllegalStateException("no go from the kit within " + DurationText.of(maxWait));
            }
            Thread.sleep(2);
        }
        long start = Long.parseLong(Files.readString(go).trim());
        long period = Duration.ofMillis(Long.parseLong(arg("holdMillis"))).toNanos();
        java.util.concurrent.atomic.AtomicIntegerArray wins =
                new java.util.concurrent.atomic.AtomicIntegerArray(rounds);
        java.util.concurrent.atomic.AtomicIntegerArray late =
                new java.util.concurrent.atomic.AtomicIntegerArray(rounds);
        Concurrently.run("worker-rounds", threads, maxWait.plus(Duration.ofNanos(period * (rounds + 1L))), i -> {
            for (int r = 0; r < rounds; r++) {
                long roundStart = start + r * period;
                sleepUntil(roundStart);
                if (System.nanoTime() - roundStart > period / 4) {
                    late.incrementAndGet(r); // too late to count as simultaneous: sit this round out
                    continue;
                }
                Optional<RemoteLock> won = locker.tryLock(key);
                if (won.isPresent()) {
                    wins.incrementAndGet(r);
                    history.acquired(won.get());
                    say("ACQUIRED " + won.get().ownerId() + " " + token(won.get()));
                    sleepUntil(roundStart + period / 2);
                    end(won.get());
                    say("FREED " + r + " " + System.nanoTime());
                }
            }
        });
        say("ROUNDS " + wins.toString().replaceAll("[\\[\\],]", ""));
        say("LATE " + late.toString().replaceAll("[\\[\\],]", ""));
    }

    /**
     * The randomized run's share of this process: {@code threads} threads run random operations on {@code keyCount}
     * keys until the kit's {@code stop} file appears; each thread's choices come from the run's {@code seed}. Reports
     * the outcomes and the locks acquired; fails if a thread saw two holders inside a key's critical section.
     */
    private void random(RemoteLocker locker, int threads, int keyCount) throws Exception {
        RandomOperations operations = new RandomOperations(
                RandomOperations.keys(key, keyCount), Duration.ofMillis(Long.parseLong(arg("holdMillis"))), history);
        locker.tryLock(key + "-warm-up").ifPresent(RemoteLock::release);
        say("OPEN " + ProcessHandle.current().pid());
        long seed = Long.parseLong(arg("seed"));
        Path stop = dir.resolve("stop");
        // The kit counts every process's acquisitions against its budget: this worker's, as it goes.
        Thread progress = new Thread(
                () -> {
                    long said = -1;
                    try {
                        while (true) {
                            long acquired = operations.acquired();
                            if (acquired != said) {
                                say("PROGRESS " + acquired);
                                said = acquired;
                            }
                            Thread.sleep(PROGRESS_MILLIS);
                        }
                    } catch (InterruptedException e) {
                        // the run is over
                    }
                },
                "worker-progress");
        progress.setDaemon(true);
        progress.start();
        // The kit ends the run with its stop file, and the worker with its stdin.
        try {
            Concurrently.run("worker-random", threads, Duration.ofDays(1), i -> {
                java.util.Random random = new java.util.Random(seed + 1_000_003L * i);
                while (!Files.exists(stop)) {
                    operations.runOne(locker, random);
                }
            });
        } finally {
            progress.interrupt();
        }
        operations.assertNoOverlap();
        StringBuilder outcomes = new StringBuilder("OUTCOMES");
        operations
                .outcomes()
                .forEach((outcome, n) ->
                        outcomes.append(' ').append(outcome).append('=').append(n));
        say(outcomes.toString());
        sections.addAndGet(operations.acquired());
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            if (left > 2_000_000) {
                Thread.sleep((left - 1_000_000) / 1_000_000);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private RemoteLock take(RemoteLocker locker, boolean soft) throws InterruptedException {
        long asked = System.nanoTime();
        RemoteLock lock;
        if (soft) {
            long end = asked + maxWait.toNanos();
            while (true) {
                Optional<RemoteLock> maybe = locker.tryLock(key);
                if (maybe.isPresent()) {
                    lock = maybe.get();
                    break;
                }
                if (System.nanoTime() > end) {
                    throw new IllegalStateException("tryLock did not succeed within " + DurationText.of(maxWait));
                }
                Thread.sleep(1);
            }
        } else {
            lock = lock(locker, LockKind.valueOf(kind.toUpperCase(java.util.Locale.ROOT)));
        }
        maxWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
        recordAcquired(lock);
        say("ACQUIRED " + lock.ownerId() + " " + token(lock));
        return lock;
    }

    /** Waits up to {@code maxWait} for a grant of {@code kind} on the key. */
    private RemoteLock lock(RemoteLocker locker, LockKind kind) throws InterruptedException {
        return Lockers.grant(locker, kind, key, permits, maxWait);
    }

    private void recordAcquired(RemoteLock lock) {
        history.acquired(lock, permits);
    }

    /**
     * One hold of {@code kind} ({@code readwrite}: the write side for every fourth {@code n}, the read side
     * otherwise) for {@code holdMillis}, recorded in the history.
     */
    private void kindHold(RemoteLocker locker, int n) throws Exception {
        LockKind side = kind.equals("readwrite")
                ? (n % 4 == 0 ? LockKind.WRITE : LockKind.READ)
                : LockKind.valueOf(kind.toUpperCase(java.util.Locale.ROOT));
        long asked = System.nanoTime();
        RemoteLock lock = lock(locker, side);
        maxWaitNanos.accumulateAndGet(System.nanoTime() - asked, Math::max);
        recordAcquired(lock);
        Thread.sleep(Long.parseLong(arg("holdMillis")));
        sections.incrementAndGet();
        end(lock);
    }

    private void end(RemoteLock lock) {
        if (lock.isHeld()) {
            history.releasing(lock);
        } else {
            history.lost(lock);
        }
        say("RELEASED " + lock.ownerId() + " " + lock.release());
    }

    /** One critical section on the shared files: exclusive marker, unguarded counter, the seed's ATM. */
    private void criticalSection(RemoteLocker locker, boolean soft) throws Exception {
        RemoteLock lock = take(locker, soft);
        Path marker = dir.resolve("inside");
        boolean mine = false;
        try {
            Files.createFile(marker);
            mine = true;
        } catch (FileAlreadyExistsException e) {
            say("OVERLAP " + lock.ownerId() + " found another holder's marker");
        }
        try {
            Path counter = dir.resolve("counter");
            long c = readLong(counter, 0);
            Thread.yield();
            writeLong(counter, c + 1);

            Path balance = dir.resolve("balance");
            if (readLong(balance, UnguardedAccount.START_BALANCE) >= UnguardedAccount.AMOUNT) {
                Thread.yield(); // the ATM hands out the cash, then debits
                long after = readLong(balance, UnguardedAccount.START_BALANCE) - UnguardedAccount.AMOUNT;
                writeLong(balance, after);
                withdrawals.incrementAndGet();
                lowest.accumulateAndGet(after, Math::min);
            } else {
                long before = readLong(balance, UnguardedAccount.START_BALANCE);
                Thread.yield();
                writeLong(balance, before + UnguardedAccount.AMOUNT);
                deposits.incrementAndGet();
            }
            sections.incrementAndGet();
        } finally {
            if (mine) {
                Files.delete(marker);
            }
            end(lock);
        }
    }

    /**
     * Holds the lock for {@code holdMillis}, writing to the fenced resource with its token all along and once more at
     * the end (also when the process was frozen meanwhile), then reports whether it still holds the lock.
     */
    private void hold(RemoteLocker locker) throws Exception {
        say("TAKING " + key);
        RemoteLock lock = take(locker, false);
        long acquiredAt = System.nanoTime();
        AtomicInteger lost = new AtomicInteger();
        lock.onLost(l -> {
            lost.incrementAndGet();
            say("LOST " + l.ownerId());
        });
        FencedResource fence = new FencedResource(dir);
        long holdNanos = Duration.ofMillis(Long.parseLong(arg("holdMillis"))).toNanos();
        while (System.nanoTime() - acquiredAt < holdNanos) {
            write(fence, lock);
            Thread.sleep(20);
        }
        write(fence, lock); // the last step of the work, whatever happened meanwhile
        long ttlNanos = Duration.ofMillis(Long.parseLong(arg("ttlMillis"))).toNanos();
        if (!lock.isHeld() || System.nanoTime() - acquiredAt > holdNanos + ttlNanos) {
            // Lost, or stopped for longer than the lease: give the locker's threads time to learn it and call onLost.
            long wait = System.nanoTime() + maxWait.toNanos();
            while (lost.get() == 0 && System.nanoTime() < wait) {
                Thread.sleep(5);
            }
        }
        say("HELD " + lock.ownerId() + " held=" + lock.isHeld() + " lost=" + lost.get());
        end(lock);
    }

    private static void write(FencedResource fence, RemoteLock lock) {
        if (lock.fencingToken().isPresent()) {
            fence.write(lock.fencingToken().getAsLong(), lock.ownerId());
            say("WRITE " + lock.ownerId() + " " + token(lock));
        }
    }

    private static String token(RemoteLock lock) {
        return lock.fencingToken().isPresent()
                ? Long.toString(lock.fencingToken().getAsLong())
                : "-";
    }

    private static long readLong(Path file, long absent) throws IOException {
        if (!Files.exists(file)) {
            return absent;
        }
        String text = Files.readString(file).trim();
        if (text.isEmpty()) {
            say("OVERLAP torn read of " + file.getFileName() + " (another holder was writing it)");
            return absent;
        }
        return Long.parseLong(text);
    }

    private static void writeLong(Path file, long value) throws IOException {
        Files.writeString(
                file,
                Long.toString(value),
                StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
    }

    private static void say(String line) {
        synchronized (OUT) {
            OUT.println(line);
        }
    }

    private static void exitWhenStdinCloses() {
        Thread watcher = new Thread(
                () -> {
                    try (InputStream in = System.in) {
                        while (in.read() >= 0) {
                            // the kit sends nothing; it only closes the pipe
                        }
                    } catch (IOException ignored) {
                        // treated as closed
                    }
                    Runtime.getRuntime().halt(2);
                },
                "kit-worker-stdin");
        watcher.setDaemon(true);
        watcher.start();
    }
}
