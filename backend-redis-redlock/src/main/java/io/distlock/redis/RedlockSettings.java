package io.distlock.redis;

import io.distlock.LockConfigurationException;
import io.distlock.LockKind;
import io.distlock.spi.BackendConfig;
import io.distlock.toolkit.DurationText;
import io.distlock.toolkit.ShownText;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The backend's options, read and checked once when it opens.
 *
 * @param leaseTime the lock's time to live in Redis ({@code ttl})
 * @param instanceTimeout how long one master may take to answer before it counts as a "no"
 * @param retryCount how many more attempts a {@code tryLock} makes after a split vote or unanswered masters
 * @param retryDelay the bound of the random delay before such a retry (seed 002, "retry on failure")
 * @param pollInterval the longest a waiter sleeps without a release message before it tries again
 * @param courtesy how long a locker that released a contended key lets the woken waiters have it before it asks for
 *     the key again; empty for the default, which depends on the number of masters ({@link #courtesyOn})
 * @param driftFactor the clock drift allowed per unit of lease time (seed 002: drift = ttl x factor + 2 ms)
 * @param keyPrefix prepended to every lock key in Redis; the release channel is {@code <keyPrefix>released}
 * @param connectTimeout how long opening waits for a majority of the masters
 * @param lockDelay the locker's lock-delay ({@link BackendConfig#lockDelay()}): every entry's time to live is its lease
 *     plus this, so that a grant that ends without a release keeps the key that much longer; zero for none
 */
record RedlockSettings(
        Duration leaseTime,
        Duration instanceTimeout,
        int retryCount,
        Duration retryDelay,
        Duration pollInterval,
        Optional<Duration> courtesy,
        double driftFactor,
        String keyPrefix,
        Duration connectTimeout,
        Duration lockDelay) {

    /** The per-instance timeout unless given: 100ms, or a tenth of a shorter ttl's. */
    static final Duration MAX_DEFAULT_INSTANCE_TIMEOUT = Duration.ofMillis(100);

    static final int DEFAULT_RETRY_COUNT = 3;
    static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(10);
    static final Duration MAX_DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);
    /**
     * The courtesy on one master unless given: about what a woken waiter takes, on a busy machine, from the release
     * message to its {@code SET NX}; on several masters the waiters' random delay ({@code retryDelay}) comes on top.
     */
    static final Duration DEFAULT_COURTESY = Duration.ofMillis(2);

    static final double DEFAULT_DRIFT_FACTOR = 0.01;
    static final String DEFAULT_KEY_PREFIX = "distlock:";
    /** The constant part of the drift allowance, seed 002: "plus 2 milliseconds for the resolution of the TTL". */
    static final Duration DRIFT_CONSTANT = Duration.ofMillis(2);
    /** A zero duration, which turns the courtesy off (other duration options must be positive). */
    private static final Pattern ZERO = Pattern.compile("0+\\s*(ms|s|m|h)?", Pattern.CASE_INSENSITIVE);
    /** The lease time must be at least this many per-instance timeouts. */
    static final int MIN_TTL_PER_INSTANCE_TIMEOUT = 10;

    static RedlockSettings read(BackendConfig config) {
        Duration ttl = config.leaseTime();
        Duration tenth = ttl.dividedBy(MIN_TTL_PER_INSTANCE_TIMEOUT);
        Duration instanceTimeout = config.durationOption(
                RedisLockBackendProvider.INSTANCE_TIMEOUT,
                tenth.compareTo(MAX_DEFAULT_INSTANCE_TIMEOUT) < 0 ? tenth : MAX_DEFAULT_INSTANCE_TIMEOUT);
        int retryCount = config.intOption(RedisLockBackendProvider.RETRY_COUNT, DEFAULT_RETRY_COUNT, 0, 1000);
        Duration retryDelay = config.durationOption(RedisLockBackendProvider.RETRY_DELAY, DEFAULT_RETRY_DELAY);
        Duration defaultPoll = ttl.dividedBy(4).compareTo(MAX_DEFAULT_POLL_INTERVAL) < 0
                ? ttl.dividedBy(4)
                : MAX_DEFAULT_POLL_INTERVAL;
        Duration pollInterval = config.durationOption(RedisLockBackendProvider.POLL_INTERVAL, defaultPoll);
        Optional<Duration> courtesy = config.option(RedisLockBackendProvider.COURTESY)
                .map(v -> ZERO.matcher(v.trim()).matches()
                        ? Duration.ZERO
                        : config.durationOption(RedisLockBackendProvider.COURTESY, DEFAULT_COURTESY));
        double drift = driftFactor(config);
        String prefix = config.stringOption(RedisLockBackendProvider.KEY_PREFIX, DEFAULT_KEY_PREFIX);
        RedlockSettings settings = new RedlockSettings(
                ttl,
                instanceTimeout,
                retryCount,
                retryDelay,
                pollInterval,
                courtesy,
                drift,
                prefix,
                config.connectTimeout(),
                config.lockDelay());
        settings.check();
        return settings;
    }

    private static double driftFactor(BackendConfig config) {
        Optional<String> raw = config.option(RedisLockBackendProvider.CLOCK_DRIFT_FACTOR);
        if (raw.isEmpty()) {
            return DEFAULT_DRIFT_FACTOR;
        }
        try {
            double value = Double.parseDouble(raw.get().trim());
            if (!(value >= 0 && value < 0.5)) {
                throw new NumberFormatException();
            }
            return value;
        } catch (NumberFormatException e) {
            throw new LockConfigurationException("Option '" + RedisLockBackendProvider.CLOCK_DRIFT_FACTOR
                    + "' must be a number in [0, 0.5), e.g. 0.01 for 1% drift, got '" + ShownText.of(raw.get()) + "'");
        }
    }

    private void check() {
        if (leaseTime.toMillis() < 1) {
            throw new LockConfigurationException(
                    "Redis TTLs count milliseconds: ttl must be at least 1ms, got " + DurationText.of(leaseTime));
        }
        if (instanceTimeout.multipliedBy(MIN_TTL_PER_INSTANCE_TIMEOUT).compareTo(leaseTime) > 0) {
            throw new LockConfigurationException("ttl " + DurationText.of(leaseTime)
                    + " is too short for the per-instance timeout " + DurationText.of(instanceTimeout) + " (option "
                    + RedisLockBackendProvider.INSTANCE_TIMEOUT + "): an acquisition"
                    + " may take that long and its validity is what remains of the ttl, so the ttl must be at least "
                    + MIN_TTL_PER_INSTANCE_TIMEOUT + " times the per-instance timeout; raise ttl to "
                    + DurationText.of(instanceTimeout.multipliedBy(MIN_TTL_PER_INSTANCE_TIMEOUT)) + " or lower "
                    + RedisLockBackendProvider.INSTANCE_TIMEOUT);
        }
        if (courtesy.isPresent() && courtesy.get().compareTo(leaseTime) >= 0) {
            throw new LockConfigurationException("Option '" + RedisLockBackendProvider.COURTESY + "' must be shorter"
                    + " than the ttl " + DurationText.of(leaseTime) + ", got " + DurationText.of(courtesy.get()));
        }
        if (keyPrefix.length() > 256) {
            throw new LockConfigurationException("Option '" + RedisLockBackendProvider.KEY_PREFIX
                    + "' must be at most 256 characters, got " + keyPrefix.length());
        }
    }

    /** The courtesy over {@code masters} masters: as given, or the default (see {@link #DEFAULT_COURTESY}). */
    Duration courtesyOn(int masters) {
        return courtesy.orElseGet(() -> masters > 1 ? DEFAULT_COURTESY.plus(retryDelay) : DEFAULT_COURTESY);
    }

    /** Seed 002's drift allowance for a lease of {@code ttl}: ttl x factor + 2 ms, in nanoseconds. */
    long driftNanos(Duration ttl) {
        return (long) (ttl.toNanos() * driftFactor) + DRIFT_CONSTANT.toNanos();
    }

    /** A lease's {@code PX} argument: whole milliseconds, rounded up (Redis refuses 0). */
    static long pxMillis(Duration ttl) {
        long millis = ttl.toMillis();
        return ttl.compareTo(Duration.ofMillis(millis)) > 0 || millis == 0 ? millis + 1 : millis;
    }

    /**
     * The {@code PX} of an entry held for {@code lease}: the lease plus the lock-delay, in whole milliseconds rounded
     * up. The holder's validity stays computed from the lease alone; only what the masters keep outlives it, so that a
     * holder that crashed or was cut off keeps the key from everybody for the lock-delay after its lease ran out, while
     * a release deletes the entry at once.
     */
    long entryPxMillis(Duration lease) {
        return pxMillis(lease.plus(lockDelay));
    }

    /**
     * How long renewal and release wait for each master: a third of the ttl (at most the connect timeout), or the
     * per-instance timeout if that is longer. Unlike acquisition, nothing is gained by giving up on a slow master
     * quickly there (both are decided as soon as a majority agrees, so one dead master costs nothing), and a release
     * must not fail because a loaded machine answered late.
     */
    Duration confirmTimeout() {
        Duration third = leaseTime.dividedBy(3);
        Duration capped = third.compareTo(connectTimeout) > 0 ? connectTimeout : third;
        return capped.compareTo(instanceTimeout) > 0 ? capped : instanceTimeout;
    }

    /** The Redis key of lock {@code key}. */
    String redisKey(String key) {
        return keyPrefix + key;
    }

    /**
     * The Redis key of the read-write lock or the semaphore on {@code key} ({@code space} other than {@link
     * LockKind.Space#LOCK}): the prefix and the key in UTF-8, then the byte {@code 0xFF} and {@code rw} or {@code sem}.
     * {@code 0xFF} occurs in no UTF-8 text, so no lock's key ({@link #redisKey}: prefix and key, both UTF-8) is ever
     * one of these, and the two spaces of one key and the spaces of two keys never meet either; the names stay under
     * the prefix (an ACL pattern {@code ~<prefix>*} covers them) and sort beside the lock's key.
     */
    byte[] spaceKey(String key, LockKind.Space space) {
        return suffixed(key, spaceSuffix(space));
    }

    /** {@link #redisKey} of {@code key} in UTF-8, then {@code suffix}. */
    private byte[] suffixed(String key, byte[] suffix) {
        byte[] name = redisKey(key).getBytes(StandardCharsets.UTF_8);
        byte[] all = Arrays.copyOf(name, name.length + suffix.length);
        System.arraycopy(suffix, 0, all, name.length, suffix.length);
        return all;
    }

    /**
     * The name waiters of {@link #spaceKey} register under and releases announce: the key's name as text (the
     * {@code 0xFF} shown as U+FFFD). Only a wake-up goes by it; a lock key that reads the same only costs a spurious
     * wake-up.
     */
    String spaceLabel(String key, LockKind.Space space) {
        return new String(spaceKey(key, space), StandardCharsets.UTF_8);
    }

    private static byte[] spaceSuffix(LockKind.Space space) {
        return switch (space) {
            case READ_WRITE -> READ_WRITE_SUFFIX.clone();
            case SEMAPHORE -> SEMAPHORE_SUFFIX.clone();
            case LOCK -> throw new IllegalArgumentException("a lock's key is redisKey(key)");
        };
    }

    private static final byte[] READ_WRITE_SUFFIX = {(byte) 0xFF, 'r', 'w'};
    private static final byte[] SEMAPHORE_SUFFIX = {(byte) 0xFF, 's', 'e', 'm'};

    /**
     * The Redis key of the release requests to {@code key}'s holders ({@code holders.lua} writes them, the renewal
     * scripts read and delete them): a hash of holder (the value its entry stores) to request ids, named like {@link
     * #spaceKey} with the suffix {@code 0xFF rq}, so it is no lock's key, stays under the prefix, and is not listed as a
     * held key.
     */
    byte[] requestsKey(String key) {
        return suffixed(key, REQUESTS_SUFFIX);
    }

    private static final byte[] REQUESTS_SUFFIX = {(byte) 0xFF, 'r', 'q'};

    /**
     * The Redis key of the mark a waiting writer of {@code key}'s read-write lock sets ({@code shared.lua}): readers
     * that come while it stands wait behind the writer. Named like {@link #spaceKey} with the suffix {@code 0xFF ww}:
     * no lock's key, under the prefix, never listed as a held key.
     */
    byte[] writerWaitsKey(String key) {
        return suffixed(key, WRITER_WAITS_SUFFIX);
    }

    private static final byte[] WRITER_WAITS_SUFFIX = {(byte) 0xFF, 'w', 'w'};

    /**
     * How long a waiting writer's mark stands after its last refused attempt: two poll intervals, so that the writer's
     * next attempt (woken by a release, or by its poll timer at the latest) renews it before it runs out; a writer that
     * died holds readers back no longer.
     */
    long writerMarkMillis() {
        return Math.max(1, pollInterval.multipliedBy(2).toMillis());
    }

    /** The pub/sub channel on which every release of this prefix is announced. */
    String releaseChannel() {
        return keyPrefix + "released";
    }
}
