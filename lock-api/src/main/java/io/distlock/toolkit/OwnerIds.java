package io.distlock.toolkit;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owner ids, one per acquisition: 32 hex digits, a dot, then the locker's owner label, e.g. {@code
 * 3f2a...9c.4711@worker-7} for the default label (process id and host). The first 16 digits are random bits drawn once
 * per process (from {@link SecureRandom}), the next 16 a sequence number of this process that starts at a random value:
 * an id is never repeated within a process, and processes are told apart by their random half. The label tells a human
 * who holds a key; since every backend stores the owner id with every entry it writes (it is the value compared on
 * release), the label is stored with them, and {@link #label(String)} reads it back. Only uniqueness is needed (no
 * backend relies on an owner id being secret), so no random bits are drawn per acquisition: that costs a system call
 * and a lock shared by every thread.
 *
 * <p>In the id, the label's letters, digits and {@code . _ ~ : @ + -} stand as they are; every other byte of its UTF-8
 * form is written {@code %XX}, so that an owner id holds no {@code /}, {@code |}, space or other character a store's
 * layout might give a meaning to.
 */
public final class OwnerIds {

    /** The longest owner label, in bytes of UTF-8. */
    public static final int MAX_LABEL_BYTES = 128;

    private static final HexFormat HEX = HexFormat.of();
    private static final int DIGITS = 32;
    private static final String PROCESS;
    private static final AtomicLong SEQUENCE;

    static {
        SecureRandom random = new SecureRandom();
        PROCESS = HEX.toHexDigits(random.nextLong());
        SEQUENCE = new AtomicLong(random.nextLong());
    }

    private static final String DEFAULT_LABEL = ProcessHandle.current().pid() + "@" + hostName();
    private static final String DEFAULT_SUFFIX = "." + encode(DEFAULT_LABEL);

    private OwnerIds() {}

    /** A new owner id with the {@linkplain #defaultLabel() default label}, never returned before. */
    public static String next() {
        return PROCESS + HEX.toHexDigits(SEQUENCE.getAndIncrement()) + DEFAULT_SUFFIX;
    }

    /**
     * A new owner id carrying {@code label}, never returned before.
     *
     * @param label an owner label, as {@link #checkLabel} accepts it
     */
    public static String next(String label) {
        String suffix = label.equals(DEFAULT_LABEL) ? DEFAULT_SUFFIX : "." + encode(label);
        return PROCESS + HEX.toHexDigits(SEQUENCE.getAndIncrement()) + suffix;
    }

    /** The owner label of a locker that sets none: this process's id and host, e.g. {@code 4711@worker-7}. */
    public static String defaultLabel() {
        return DEFAULT_LABEL;
    }

    /**
     * Checks an owner label: not null, not blank, at most {@link #MAX_LABEL_BYTES} bytes in UTF-8, and no control
     * character (a label is shown in one line of a table).
     *
     * @return the label
     * @throws IllegalArgumentException naming what is wrong
     */
    public static String checkLabel(String label) {
        Objects.requireNonNull(label, "ownerLabel must not be null");
        if (label.isBlank()) {
            throw new IllegalArgumentException("ownerLabel must not be blank");
        }
        int bytes = label.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_LABEL_BYTES) {
            throw new IllegalArgumentException("ownerLabel is " + bytes + " bytes in UTF-8; at most " + MAX_LABEL_BYTES
                    + " are stored with each entry");
        }
        for (int i = 0; i < label.length(); i++) {
            if (Character.isISOControl(label.charAt(i))) {
                throw new IllegalArgumentException("ownerLabel must not hold control characters (found U+"
                        + HEX.toHexDigits(label.charAt(i)) + " at " + i + ")");
            }
        }
        return label;
    }

    /**
     * The owner label an owner id carries; empty if {@code ownerId} is not one of these ids (an entry another tool
     * wrote, such as {@code etcdctl lock}'s).
     */
    public static Optional<String> label(String ownerId) {
        if (ownerId.length() <= DIGITS + 1 || ownerId.charAt(DIGITS) != '.') {
            return Optional.empty();
        }
        for (int i = 0; i < DIGITS; i++) {
            if (Character.digit(ownerId.charAt(i), 16) < 0) {
                return Optional.empty();
            }
        }
        return decode(ownerId.substring(DIGITS + 1));
    }

    private static boolean plain(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || ".-_~:@+".indexOf(c) >= 0;
    }

    private static String encode(String label) {
        boolean allPlain = true;
        for (int i = 0; i < label.length() && allPlain; i++) {
            allPlain = plain(label.charAt(i));
        }
        if (allPlain) {
            return label;
        }
        StringBuilder out = new StringBuilder(label.length() * 3);
        for (byte b : label.getBytes(StandardCharsets.UTF_8)) {
            if (b >= 0 && plain((char) b)) {
                out.append((char) b);
            } else {
                out.append('%').append(HEX.toHexDigits(b).toUpperCase(java.util.Locale.ROOT));
            }
        }
        return out.toString();
    }

    private static Optional<String> decode(String encoded) {
        if (encoded.indexOf('%') < 0) {
            return Optional.of(encoded);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%') {
                if (i + 2 >= encoded.length()) {
                    return Optional.empty();
                }
                int high = Character.digit(encoded.charAt(i + 1), 16);
                int low = Character.digit(encoded.charAt(i + 2), 16);
                if (high < 0 || low < 0) {
                    return Optional.empty();
                }
                bytes.write(high * 16 + low);
                i += 2;
            } else {
                bytes.write(c);
            }
        }
        return Optional.of(bytes.toString(StandardCharsets.UTF_8));
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        String name;
        if (env != null && !env.isBlank()) {
            name = env;
        } else {
            try {
                name = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                name = "unknown-host";
            }
        }
        return name.replaceAll("[^A-Za-z0-9.-]", "_");
    }
}
