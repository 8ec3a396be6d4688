package io.distlock.kit.history;

import io.distlock.LockKind;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * One event of a lock history: a hold began ({@link Type#ACQUIRED}, stamped right after the lock was granted), ended
 * ({@link Type#RELEASING}, stamped right before the release was sent), was reported lost ({@link Type#LOST}), the
 * backend reported until when the store guarantees it ({@link Type#VALID}, at the grant and at every renewal), or the
 * backend was asked to release it ({@link Type#FREED}).
 *
 * <p>Timestamps are {@link System#nanoTime()} readings. On Linux that is {@code CLOCK_MONOTONIC}, one clock for every
 * process of the host, so the histories of several JVMs on one machine merge into one timeline.
 *
 * @param nanos the monotonic timestamp
 * @param type what happened
 * @param key the lock's key
 * @param token the hold's fencing token, if the backend gives one
 * @param holder the lock's owner id: unique per acquisition, it pairs a hold's begin and end
 * @param pid the process the holder ran in
 * @param validUntil for {@link Type#VALID}, the reported validity (a monotonic reading like {@code nanos}); empty
 *     for the other types
 * @param kind what the hold is: a lock, one side of a read-write lock, or a semaphore's permit; holds of different
 *     {@linkplain LockKind#space() spaces} on one key never exclude each other
 * @param limit how many holds of a shared kind may overlap ({@link io.distlock.spi.LockRequest#limit()}): 1 for an
 *     exclusive kind, the semaphore's N for a permit, {@link Integer#MAX_VALUE} for a read lock
 */
public record HistoryEvent(
        long nanos,
        Type type,
        String key,
        OptionalLong token,
        String holder,
        long pid,
        OptionalLong validUntil,
        LockKind kind,
        int limit) {

    /** What happened to a hold. */
    public enum Type {
        /** The lock was granted; stamped after the grant returned. */
        ACQUIRED,
        /** The holder is about to release; stamped before the release is sent. */
        RELEASING,
        /** The lock was reported lost to the holder. */
        LOST,
        /** The backend reported the hold's validity (at the grant or a renewal): see {@link #validUntil()}. */
        VALID,
        /**
         * The backend was asked to release the grant; stamped before the request. From then on the store owes the
         * grant nothing: what ends the promise of a grant that never reached its caller as held.
         */
        FREED
    }

    /** Checks that every part is given, the holder has no whitespace, and a validity is given exactly for VALID. */
    public HistoryEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(validUntil, "validUntil");
        Objects.requireNonNull(kind, "kind");
        if (limit < 1 || (kind.exclusive() && limit != 1)) {
            throw new IllegalArgumentException("limit must be at least 1, and 1 for " + kind + ": " + limit);
        }
        if (holder.isEmpty() || holder.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("holder must be non-empty without whitespace: '" + holder + "'");
        }
        if (validUntil.isPresent() != (type == Type.VALID)) {
            throw new IllegalArgumentException(
                    "a validity belongs to VALID events only, got " + type + " with " + validUntil);
        }
    }

    /** An event of a {@link LockKind#LOCK lock}. */
    public HistoryEvent(
            long nanos, Type type, String key, OptionalLong token, String holder, long pid, OptionalLong validUntil) {
        this(nanos, type, key, token, holder, pid, validUntil, LockKind.LOCK, 1);
    }

    /** An event of a {@link LockKind#LOCK lock} without validity: any type but {@link Type#VALID}. */
    public HistoryEvent(long nanos, Type type, String key, OptionalLong token, String holder, long pid) {
        this(nanos, type, key, token, holder, pid, OptionalLong.empty());
    }

    /** Whether this hold excludes every other hold of its space on its key ({@link LockKind#exclusive()}). */
    public boolean exclusive() {
        return kind.exclusive();
    }

    /**
     * The event as one line of the history file format: {@code nanos type key token holder pid validUntil kind limit},
     * space separated, {@code -} for an absent token or validity and for the limit of a read lock (unbounded).
     */
    public String toLine() {
        return nanos + " " + type + " " + URLEncoder.encode(key, StandardCharsets.UTF_8) + " " + text(token) + " "
                + holder + " " + pid + " " + text(validUntil) + " " + kind.label() + " "
                + (limit == Integer.MAX_VALUE ? "-" : Integer.toString(limit));
    }

    private static String text(OptionalLong value) {
        return value.isPresent() ? Long.toString(value.getAsLong()) : "-";
    }

    private static OptionalLong number(String text) {
        return text.equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(text));
    }

    /**
     * Parses a line written by {@link #toLine()}; a line of the seven fields before kind and limit is a lock's.
     *
     * @throws IllegalArgumentException if the line is not in that format
     */
    public static HistoryEvent parse(String line) {
        String[] f = line.trim().split(" ");
        if (f.length != 7 && f.length != 9) {
            throw new IllegalArgumentException("Not a history line (want 9 fields, or 7 of a lock): '" + line + "'");
        }
        try {
            return new HistoryEvent(
                    Long.parseLong(f[0]),
                    Type.valueOf(f[1]),
                    URLDecoder.decode(f[2], StandardCharsets.UTF_8),
                    number(f[3]),
                    f[4],
                    Long.parseLong(f[5]),
                    number(f[6]),
                    f.length == 7 ? LockKind.LOCK : LockKind.valueOf(f[7].toUpperCase(java.util.Locale.ROOT)),
                    f.length == 7 || f[8].equals("-")
                            ? (f.length == 7 ? 1 : Integer.MAX_VALUE)
                            : Integer.parseInt(f[8]));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Not a history line: '" + line + "': " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return toLine();
    }
}
