package io.distlock.redis;

import io.distlock.LockKind;
import io.distlock.Ticker;
import io.distlock.spi.LockRequest;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seed 002's algorithm over the N masters: one attempt (steps 1-5), renewal, release. Every command goes to all
 * masters at once; nothing here waits on a thread. Stateless apart from the masters: an acquisition's state is its
 * {@link RedisLease}.
 */
final class Redlock {

    private static final Logger log = LoggerFactory.getLogger(Redlock.class);

    /** How an attempt ended. */
    enum Outcome {
        /** A majority set the key in time: the lock is ours. */
        GRANTED,
        /** No master set it: another owner holds the lock, or contenders that each hold a part (they clean up). */
        HELD,
        /** Some masters set it, too few or too late: votes split between contenders. Retry after a random delay. */
        SPLIT,
        /** Too few masters answered for any majority: the store is unreachable as far as we can tell. */
        UNANSWERED,
        /** A master refused a permit: its semaphore is in use with another number of permits ({@code inUseWith}). */
        MISMATCH
    }

    /**
     * One attempt's result: the lease when granted, the tally for messages, and for {@link Outcome#MISMATCH} the
     * number of permits the semaphore is in use with (else 0).
     */
    record Attempt(Outcome outcome, RedisLease lease, Tally tally, long inUseWith) {
        Attempt(Outcome outcome, RedisLease lease, Tally tally) {
            this(outcome, lease, tally, 0);
        }
    }

    /** The release script's channel argument that deletes without publishing. */
    private static final String NO_ANNOUNCEMENT = "";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();
    private static final RandomBlock RANDOM_BLOCK = new RandomBlock();
    private static final int VALUE_BYTES = 20;
    private static final Pattern OWN_VALUE = Pattern.compile("[0-9a-f]{" + VALUE_BYTES * 2 + "}:.*", Pattern.DOTALL);
    private static final int LOCKER_ID_BYTES = HandOffCourtesy.LOCKER_ID_LENGTH / 2;

    private final List<Master> masters;
    private final int majority;
    private final RedlockSettings settings;
    private final Ticker ticker;
    // Read once: confirmTimeout() divides a Duration (in BigDecimal); every release needs both, a renewal the first.
    private final Duration confirmTimeout;
    private final String releaseChannel;
    /** The start of every value this locker sets: {@link #newValue}. */
    private final String lockerId;
    /** Whether a renewal that could not read the release requests was logged: once per backend. */
    private volatile boolean requestsUnreadableLogged;

    Redlock(List<Master> masters, int majority, RedlockSettings settings, Ticker ticker) {
        this.masters = masters;
        this.majority = majority;
        this.settings = settings;
        this.ticker = ticker;
        this.confirmTimeout = settings.confirmTimeout();
        this.releaseChannel = settings.releaseChannel();
        byte[] id = new byte[LOCKER_ID_BYTES];
        RANDOM.nextBytes(id);
        this.lockerId = HexFormat.of().formatHex(id);
    }

    int majority() {
        return majority;
    }

    /** The start of every value this locker sets ({@link #newValue}): what names it in release messages. */
    String lockerId() {
        return lockerId;
    }

    List<Master> masters() {
        return masters;
    }

    /**
     * Steps 1-5: read the ticker, {@code SET key value NX PX ttl} on every master in parallel (each bounded by the
     * per-instance timeout), granted when a majority said yes and validity = ttl - elapsed - drift is still positive;
     * otherwise the key is deleted, by value, from every master that may have set it, before the future completes.
     */
    CompletableFuture<Attempt> attempt(LockRequest request) {
        return attempt(request, request.kind() == LockKind.LOCK ? settings.redisKey(request.key()) : null, null);
    }

    /**
     * {@link #attempt(LockRequest)} with the lock's Redis key ({@link RedlockSettings#redisKey}) computed by the caller,
     * which has it already (unused for the other kinds), and for a writer that waits, its mark ({@link #writerMark}):
     * a refused attempt marks the read-write lock, so that later readers wait behind the writer; null for none.
     */
    CompletableFuture<Attempt> attempt(LockRequest request, String redisKey, String writerMark) {
        if (request.kind() != LockKind.LOCK) {
            return attemptShared(request, writerMark);
        }
        String value = newValue(request.ownerId());
        long ttlMillis = settings.entryPxMillis(request.leaseTime());
        long start = ticker.read();
        List<CompletableFuture<Vote>> votes = new ArrayList<>(masters.size());
        for (Master m : masters) {
            votes.add(m.setIfAbsent(redisKey, value, ttlMillis));
        }
        return Tally.count(votes, majority, true).thenCompose(tally -> {
            long validUntil = start + request.leaseTime().toNanos() - settings.driftNanos(request.leaseTime());
            if (tally.hasMajority() && ticker.read() - validUntil < 0) {
                RedisLease lease = new RedisLease(
                        request.key(), request.ownerId(), redisKey, value, validUntil, request.lossListener());
                return CompletableFuture.completedFuture(new Attempt(Outcome.GRANTED, lease, tally));
            }
            return cleanUp(redisKey, value, tally).thenApply(done -> new Attempt(classify(tally), null, tally));
        });
    }

    /**
     * How many masters must keep a grant of {@code request}: a majority, as for a lock, except for a semaphore of N > 1
     * permits over several masters. A majority cannot bound that: on 3 masters, holders of {1,2}, {2,3} and {1,3}
     * each have a majority and no master has more than 2, so a semaphore of 2 would have 3 holders. N + 1 holders on
     * q masters each are (N + 1) q entries, which N entries per master can take only if (N + 1) q <= N M; so q =
     * floor(N M / (N + 1)) + 1 of the M masters makes N + 1 holders impossible (3 of 3 for N = 2; 4 of 5 for N = 2 or
     * 3; all 5 for N >= 4), at the cost of the masters that may be down.
     */
    int quorum(LockRequest request) {
        return quorum(request.kind(), request.limit());
    }

    /** {@link #quorum(LockRequest)} of a grant of {@code kind}, with {@code limit} permits for a permit. */
    int quorum(LockKind kind, long limit) {
        if (kind != LockKind.PERMIT || limit == 1) {
            return majority;
        }
        long m = masters.size();
        return (int) Math.min(m, limit * m / (limit + 1) + 1);
    }

    /**
     * Steps 1-5 for a read or write share or a permit: the shared script adds the holder to the space's set on every
     * master that grants it by the one rule (no writer there for a reader; nobody for a writer; fewer than N holders,
     * and the same N, for a permit), and the grant needs {@link #quorum} of them within the validity, as for a lock;
     * otherwise the holder is removed from every master that may have added it. A master that refuses for a
     * different N makes the attempt {@link Outcome#MISMATCH} unless a quorum granted it anyway (the semaphore's N is
     * then the asked one on a quorum, and no master ever holds more than its own holders' N).
     */
    private CompletableFuture<Attempt> attemptShared(LockRequest request, String writerMark) {
        byte[] spaceKey = settings.spaceKey(request.key(), request.kind().space());
        List<byte[]> keys = request.kind().space() == LockKind.Space.READ_WRITE
                ? List.of(spaceKey, settings.writerWaitsKey(request.key()))
                : List.of(spaceKey);
        String mark = writerMark == null ? "" : writerMark;
        String markMillis = Long.toString(settings.writerMarkMillis());
        String holder = holderTag(request) + ":" + newValue(request.ownerId());
        String ttl = Long.toString(settings.entryPxMillis(request.leaseTime()));
        String exclusive = request.exclusive() ? "x" : "s";
        String permits = request.kind() == LockKind.PERMIT ? Integer.toString(request.limit()) : "";
        int quorum = quorum(request);
        AtomicLong inUseWith = new AtomicLong();
        long start = ticker.read();
        List<CompletableFuture<Vote>> votes = new ArrayList<>(masters.size());
        for (Master m : masters) {
            votes.add(m.run(
                    settings.instanceTimeout(),
                    LuaScript.SHARED,
                    keys,
                    reply -> {
                        if (reply < 0) {
                            inUseWith.set(-reply);
                        }
                        return reply == 1L ? Vote.YES : Vote.NO;
                    },
                    "acquire",
                    holder,
                    ttl,
                    exclusive,
                    permits,
                    mark,
                    markMillis));
        }
        return Tally.count(votes, quorum, true).thenCompose(tally -> {
            long validUntil = start + request.leaseTime().toNanos() - settings.driftNanos(request.leaseTime());
            if (tally.hasMajority() && ticker.read() - validUntil < 0) {
                RedisLease lease = new RedisLease(
                        request.key(),
                        request.ownerId(),
                        settings.spaceLabel(request.key(), request.kind().space()),
                        holder,
                        validUntil,
                        request.kind(),
                        spaceKey,
                        quorum,
                        request.lossListener());
                return CompletableFuture.completedFuture(new Attempt(Outcome.GRANTED, lease, tally));
            }
            List<CompletableFuture<Vote>> removals = new ArrayList<>();
            for (int i = 0; i < masters.size(); i++) {
                if (tally.vote(i) != Vote.NO) {
                    removals.add(removeShared(masters.get(i), settings.instanceTimeout(), spaceKey, holder, "", ""));
                }
            }
            CompletableFuture<?> cleaned = CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new));
            return cleaned.thenApply(done -> inUseWith.get() > 0
                    ? new Attempt(Outcome.MISMATCH, null, tally, inUseWith.get())
                    : new Attempt(classify(tally, quorum), null, tally));
        });
    }

    /**
     * A new mark for a writer that waits ({@link #attempt(LockRequest, String, String)}): one per acquisition, the
     * same on every master and at every attempt, so that its grant deletes the mark it set, and another writer's
     * grant leaves that writer's mark alone.
     */
    String writerMark(String ownerId) {
        return newValue(ownerId);
    }

    /**
     * Deletes a writer's mark ({@link #writerMark}) from every master where it still stands (compare-and-delete, no
     * announcement): the writer's wait ended without a grant, and readers need not wait for the mark to run out.
     */
    CompletableFuture<Void> withdrawWriterMark(String key, String writerMark) {
        byte[] markKey = settings.writerWaitsKey(key);
        List<CompletableFuture<Vote>> votes = new ArrayList<>(masters.size());
        for (Master m : masters) {
            votes.add(m.run(
                    settings.instanceTimeout(),
                    LuaScript.RELEASE,
                    markKey,
                    reply -> reply == 1L ? Vote.YES : Vote.NO,
                    writerMark,
                    NO_ANNOUNCEMENT));
        }
        return CompletableFuture.allOf(votes.toArray(CompletableFuture[]::new));
    }

    /** A holder's tag in its set ({@code shared.lua}): w, r, or the semaphore's number of permits. */
    private static String holderTag(LockRequest request) {
        return switch (request.kind()) {
            case WRITE -> "w";
            case READ -> "r";
            default -> Integer.toString(request.limit());
        };
    }

    private static CompletableFuture<Vote> removeShared(
            Master master, Duration timeout, byte[] spaceKey, String holder, String channel, String message) {
        return master.run(
                timeout,
                LuaScript.SHARED,
                spaceKey,
                reply -> reply == 1L ? Vote.YES : Vote.NO,
                "release",
                holder,
                channel,
                message);
    }

    /**
     * Why an attempt that was not granted failed: too few masters answered to tell; we won some masters (a split
     * vote between simultaneous contenders, or a majority that came too late: retry soon); or we won none (another
     * owner holds it, or contenders that will retry and publish their clean-up).
     */
    private Outcome classify(Tally tally) {
        return classify(tally, majority);
    }

    private static Outcome classify(Tally tally, int majority) {
        if (tally.yes() + tally.no() < majority) {
            return Outcome.UNANSWERED;
        }
        return tally.yes() > 0 ? Outcome.SPLIT : Outcome.HELD;
    }

    /**
     * Deletes a failed attempt's value from every master that may hold it: all but those that answered "no" (the
     * value is unique to the attempt, so a refused {@code SET NX} left nothing there). Completes when all answered.
     * Announces nothing: no lock that anybody held is freed, and waking the waiters for it fed a loop (contenders
     * split against a holder that has a bare majority, clean up, wake each other, and split again).
     */
    private CompletableFuture<Tally> cleanUp(String redisKey, String value, Tally tally) {
        List<CompletableFuture<Vote>> deletes = new ArrayList<>();
        for (int i = 0; i < masters.size(); i++) {
            if (tally.vote(i) != Vote.NO) {
                deletes.add(masters.get(i)
                        .run(settings.instanceTimeout(), LuaScript.RELEASE, redisKey, value, NO_ANNOUNCEMENT));
            }
        }
        if (deletes.isEmpty()) {
            return CompletableFuture.completedFuture(tally);
        }
        return Tally.count(deletes, deletes.size() / 2 + 1, false);
    }

    /**
     * Compare-and-pexpire to {@code leaseTime} (plus the lock-delay: {@link RedlockSettings#entryPxMillis}) on every
     * master; the new validity is measured from before the scripts were sent, from {@code leaseTime} alone, and counts
     * only if a majority extended the key before the current validity ran out (seed 002, "extending the lock"). It is
     * already past when {@code leaseTime} is shorter than the answers took plus the drift allowance: the key is then
     * ours until its (short) time to live, but promised to nobody. Each master's script also reads and deletes the
     * release requests to the lease there, in the same round trip; the lease tells its locker of each new one as soon
     * as a master's answer brings it ({@link RedisLease#heard}), whatever the renewal's outcome.
     */
    CompletableFuture<Renewal> renew(RedisLease lease, Duration leaseTime) {
        long start = ticker.read();
        String ttl = Long.toString(settings.entryPxMillis(leaseTime));
        List<CompletableFuture<Vote>> votes = new ArrayList<>(masters.size());
        boolean shared = lease.kind() != LockKind.LOCK;
        int needed = shared ? lease.quorum() : majority;
        List<byte[]> keys = List.of(
                shared ? lease.spaceKey() : lease.redisKey().getBytes(StandardCharsets.UTF_8),
                settings.requestsKey(lease.key()));
        Function<List<Object>, Vote> verdict = reply -> renewed(lease, reply);
        for (Master m : masters) {
            votes.add(
                    shared
                            ? m.runForArray(
                                    confirmTimeout, LuaScript.SHARED, keys, verdict, "renew", lease.value(), ttl)
                            : m.runForArray(confirmTimeout, LuaScript.RENEW, keys, verdict, lease.value(), ttl));
        }
        return Tally.count(votes, needed, true).thenApply(tally -> {
            long now = ticker.read();
            long validUntil = start + leaseTime.toNanos() - settings.driftNanos(leaseTime);
            boolean inTime = now - lease.validUntilNanos() < 0;
            if (tally.hasMajority() && inTime) {
                lease.renewed(validUntil);
                return new Renewal(Renewal.Result.RENEWED, validUntil, tally);
            }
            boolean couldStillHold = tally.yes() + tally.failed() + tally.pending() >= needed;
            return new Renewal(couldStillHold && inTime ? Renewal.Result.UNKNOWN : Renewal.Result.LOST, 0L, tally);
        });
    }

    /**
     * One master's answer to a renewal ({@code renew.lua}, {@code shared.lua}): YES if it still held the lease, after
     * passing on the release requests it read; a master that could not read them (a user without {@code HGET}) is
     * logged once.
     */
    private Vote renewed(RedisLease lease, List<Object> reply) {
        if (reply.isEmpty() || !Long.valueOf(1L).equals(reply.get(0))) {
            return Vote.NO;
        }
        if (reply.size() > 2) {
            if (!requestsUnreadableLogged) {
                requestsUnreadableLogged = true;
                log.warn(
                        "Release requests to this locker's holders are not heard: a renewal could not read them ({});"
                                + " the Redis user needs HGET and HDEL on the key prefix",
                        reply.get(2));
            }
        } else if (reply.size() == 2) {
            lease.heard(String.valueOf(reply.get(1)));
        }
        return Vote.YES;
    }

    /** A renewal's result. */
    record Renewal(Result result, long validUntilNanos, Tally tally) {
        enum Result {
            RENEWED,
            LOST,
            UNKNOWN
        }
    }

    /**
     * Compare-and-delete on every master, whatever we think each holds; decided as soon as a majority deleted it or
     * too few can, then completes once the other masters have answered too, or {@code instanceTimeout} later: a
     * release that returns leaves nothing on a healthy master (the others were caught still deleting under load),
     * and a dead or frozen master costs it at most the per-instance timeout.
     */
    CompletableFuture<Tally> release(RedisLease lease) {
        List<CompletableFuture<Vote>> votes = new ArrayList<>(masters.size());
        boolean shared = lease.kind() != LockKind.LOCK;
        for (Master m : masters) {
            votes.add(
                    shared
                            ? removeShared(
                                    m,
                                    confirmTimeout,
                                    lease.spaceKey(),
                                    lease.value(),
                                    releaseChannel,
                                    lease.releaseId() + " " + lease.redisKey())
                            : m.run(
                                    confirmTimeout,
                                    LuaScript.RELEASE,
                                    lease.redisKey(),
                                    lease.value(),
                                    releaseChannel));
        }
        return Tally.count(votes, quorum(lease), true).thenCompose(decided -> {
            if (decided.pending() == 0) {
                return CompletableFuture.completedFuture(decided); // every master answered: nothing to wait for
            }
            return CompletableFuture.allOf(votes.toArray(CompletableFuture[]::new))
                    .completeOnTimeout(null, settings.instanceTimeout().toNanos(), TimeUnit.NANOSECONDS)
                    .thenApply(rest -> decided);
        });
    }

    /** How many masters must keep {@code lease}: {@link #quorum}, or the majority for a lock. */
    int quorum(RedisLease lease) {
        return lease.kind() == LockKind.LOCK ? majority : lease.quorum();
    }

    /** Said of an attempt {@link #refusedForGood}, after the majority it lacked. */
    static final String REFUSED_FOR_GOOD = ", and the refusals do not pass by waiting";

    /**
     * Whether the masters whose votes in {@code tally} failed with a refusal no wait outlasts ({@link
     * Master#refusedForGood}) leave too few others for {@code quorum}: then waiting cannot help, and the attempt's
     * caller fails at once instead of after {@code connectTimeout}.
     */
    boolean refusedForGood(Tally tally, int quorum) {
        int refused = 0;
        for (int i = 0; i < masters.size(); i++) {
            if (tally.vote(i) == Vote.FAILED && masters.get(i).refusedForGood()) {
                refused++;
            }
        }
        return refused > 0 && masters.size() - refused < quorum;
    }

    /** The masters that did not answer in the tally, with their last error: for messages. */
    String unanswered(Tally tally) {
        List<String> failed = new ArrayList<>();
        for (int i = 0; i < masters.size(); i++) {
            if (tally.vote(i) == Vote.FAILED) {
                failed.add(masters.get(i) + " (" + masters.get(i).lastError() + ")");
            }
        }
        return failed.stream().collect(Collectors.joining(", "));
    }

    /**
     * 20 bytes from {@link SecureRandom} (seed 002), in hex, then the owner id for whoever reads the store. The first 8
     * bytes are drawn once per locker ({@link #lockerId}), the other 12 per acquisition: unique per acquisition all the
     * same, and a release message (which names the first 40 characters) tells which locker released, for the
     * courtesy's turns ({@link HandOffCourtesy}).
     */
    /**
     * The owner id a value of {@link #newValue} carries: what follows the 40 hex digits and the colon; the value itself
     * when it is not of that form (another tool set the key).
     */
    static String ownerIdOf(String value) {
        return OWN_VALUE.matcher(value).matches() ? value.substring(VALUE_BYTES * 2 + 1) : value;
    }

    String newValue(String ownerId) {
        StringBuilder value = new StringBuilder(VALUE_BYTES * 2 + 1 + ownerId.length()).append(lockerId);
        RANDOM_BLOCK.appendHex(value, VALUE_BYTES - LOCKER_ID_BYTES);
        return value.append(':').append(ownerId).toString();
    }

    /**
     * Bytes of {@link SecureRandom} drawn {@value #BLOCK_BYTES} at a time and handed out once each: the same source,
     * without a call into it per acquisition (on Linux a lock shared by every thread, a SHA-1 mix and now and then a
     * read of {@code /dev/urandom}).
     */
    private static final class RandomBlock {
        private static final int BLOCK_BYTES = 1024;
        private final byte[] block = new byte[BLOCK_BYTES];
        private int used = BLOCK_BYTES;

        /** Appends the next {@code n} bytes (at most {@value #BLOCK_BYTES}) to {@code out} in hex. */
        synchronized void appendHex(StringBuilder out, int n) {
            if (used + n > BLOCK_BYTES) {
                RANDOM.nextBytes(block);
                used = 0;
            }
            HEX.formatHex(out, block, used, used + n);
            used += n;
        }
    }
}
