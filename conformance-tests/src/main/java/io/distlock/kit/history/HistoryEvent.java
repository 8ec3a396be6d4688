package io.distlock.kit.history;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * One event of a lock history: a hold began ({@link Type#ACQUIRED}, stamped right after the lock was granted), ended
 * ({@link Type#RELEASING}, stamped right before the release was sent), or was reported lost ({@link Type#LOST}).
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
 */
public record HistoryEvent(long nanos, Type type, String key, OptionalLong token, String holder, long pid) {

    /** What happened to a hold. */
    public enum Type {
        /** The lock was granted; stamped after the grant returned. */
        ACQUIRED,
        /** The holder is about to release; stamped before the release is sent. */
        RELEASING,
        /** The lock was reported lost to the holder. */
        LOST
    }

    /** Checks that every part is given and the holder has no whitespace. */
    public HistoryEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(holder, "holder");
        if (holder.isEmpty() || holder.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("holder must be non-empty without whitespace: '" + holder + "'");
        }
    }

    /** The event as one line of the history file format: {@code nanos type key token holder pid}, space separated. */
    public String toLine() {
        return nanos + " " + type + " " + URLEncoder.encode(key, StandardCharsets.UTF_8) + " "
                + (token.isPresent() ? Long.toString(token.getAsLong()) : "-") + " " + holder + " " + pid;
    }

    /**
     * Parses a line written by {@link #toLine()}.
     *
     * @throws IllegalArgumentException if the line is not in that format
     */
    public static HistoryEvent parse(String line) {
        String[] f = line.trim().split(" ");
        if (f.length != 6) {
            throw new IllegalArgumentException("Not a history line (want 6 fields): '" + line + "'");
        }
        try {
            return new HistoryEvent(
                    Long.parseLong(f[0]),
                    Type.valueOf(f[1]),
                    URLDecoder.decode(f[2], StandardCharsets.UTF_8),
                    f[3].equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(f[3])),
                    f[4],
                    Long.parseLong(f[5]));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Not a history line: '" + line + "': " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return toLine();
    }
}
